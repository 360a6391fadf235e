// /metrics over HTTPS, each request authenticated and authorized (metrics-access.ts):
// controller-runtime's secure metrics server. The certificate is the mounted
// one (cert-manager's tls.crt and tls.key), read again every minute so a
// renewal is served without a restart, or a self-signed one made at start.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import { listen, type Listening } from './listen.js';
import type { Logger } from './logger.js';
import type { MetricsAccess } from './metrics-access.js';
import { selfSignedCertificate, type ServingCertificate } from './self-signed-certificate.js';

export interface CertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface SecureMetricsOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly access: MetricsAccess;
  /** mounted files; absent: a self-signed certificate made at start */
  readonly tls?: CertificateFiles | undefined;
  readonly log: Logger;
}

const RELOAD_MS = 60_000;

async function readCertificate(files: CertificateFiles): Promise<ServingCertificate> {
  try {
    const [cert, key] = await Promise.all([
      readFile(files.certFile, 'utf8'),
      readFile(files.keyFile, 'utf8'),
    ]);
    return { cert, key };
  } catch (error) {
    throw new Error(
      `cannot read the metrics certificate (${files.certFile}, ${files.keyFile}): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

export async function startSecureMetricsServer(options: SecureMetricsOptions): Promise<Listening> {
  const { access, registry, log } = options;
  let served =
    options.tls === undefined
      ? selfSignedCertificate({
          commonName: 'kubebus-metrics',
          hosts: [...new Set([hostname(), 'localhost', '127.0.0.1'])],
        })
      : await readCertificate(options.tls);
  const server: Server = createServer(
    {
      cert: served.cert,
      key: served.key,
      minVersion: 'TLSv1.2',
      headersTimeout: 10_000,
      requestTimeout: 30_000,
    },
    (req, res) => {
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
  );
  const files = options.tls;
  const reload =
    files === undefined
      ? undefined
      : setInterval(() => {
          readCertificate(files).then(
            (next) => {
              if (next.cert === served.cert && next.key === served.key) return;
              try {
                // a pair read mid-rotation (or a bad Secret) throws: keep serving the last one
                server.setSecureContext({ cert: next.cert, key: next.key });
              } catch (error) {
                log.warn(
                  { err: error, cert: files.certFile },
                  'keeping the last metrics certificate',
                );
                return;
              }
              served = next;
              log.info({ cert: files.certFile }, 'serving the renewed metrics certificate');
            },
            (error: unknown) => {
              log.warn({ err: error }, 'keeping the last metrics certificate');
            },
          );
        }, RELOAD_MS);
  reload?.unref();
  const listening = await listen(server, options.host, options.port);
  return {
    port: listening.port,
    close: async () => {
      clearInterval(reload);
      await listening.close();
    },
  };
}
