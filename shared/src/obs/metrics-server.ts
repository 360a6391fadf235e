// /metrics over HTTPS, each request authenticated and authorized (metrics-access.ts):
// controller-runtime's secure metrics server. The certificate is the mounted
// one (cert-manager's tls.crt and tls.key), re-read on renewal, or a
// self-signed one made at start: https-server.ts.
import type { Registry } from 'prom-client';
import { startHttpsServer, type CertificateFiles } from './https-server.js';
import type { Listening } from './listen.js';
import type { Logger } from './logger.js';
import type { MetricsAccess } from './metrics-access.js';

export type { CertificateFiles } from './https-server.js';

export interface SecureMetricsOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly access: MetricsAccess;
  /** mounted files; absent: a self-signed certificate made at start */
  readonly tls?: CertificateFiles | undefined;
  readonly log: Logger;
}

export async function startSecureMetricsServer(options: SecureMetricsOptions): Promise<Listening> {
  const { access, registry, log } = options;
  return startHttpsServer({
    host: options.host,
    port: options.port,
    tls: options.tls,
    purpose: 'metrics',
    portSetting: 'KUBEBUS_METRICS_PORT',
    log,
    handler: (req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      if (req.method !== 'GET') {
        res.writeHead(405, { allow: 'GET' }).end();
        return;
      }
      access.check(req.headers.authorization, path, req.method).then(
        async (decision) => {
          if (!decision.ok) {
            res
              .writeHead(decision.status, {
                'content-type': 'text/plain',
                ...(decision.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
              })
              .end(
                `${decision.status === 401 ? 'Unauthorized' : decision.status === 403 ? 'Forbidden' : 'Unavailable'}: ${decision.reason}\n`,
              );
            return;
          }
          const text = await registry.metrics();
          res.writeHead(200, { 'content-type': registry.contentType }).end(text);
        },
        (error: unknown) => {
          log.warn({ err: error }, 'serving /metrics failed');
          res.writeHead(500).end();
        },
      );
    },
  });
}
