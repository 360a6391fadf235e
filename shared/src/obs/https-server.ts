// An HTTPS server whose certificate is the mounted one (cert-manager's tls.crt
// and tls.key, from a Secret), read again every minute so a renewal is served
// without a restart — a pair read mid-rotation keeps the last one — or a
// self-signed one made at start. /metrics and the conversion webhook serve
// through it.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { hostname } from 'node:os';
import { listen, type Listening } from './listen.js';
import type { Logger } from './logger.js';
import { selfSignedCertificate, type ServingCertificate } from './self-signed-certificate.js';

export interface CertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface HttpsServerOptions {
  readonly host: string;
  readonly port: number;
  /** mounted files; absent: a self-signed certificate made at start */
  readonly tls?: CertificateFiles | undefined;
  /** what the server serves, in messages: "metrics", "conversion webhook" */
  readonly purpose: string;
  /** the setting of its port (KUBEBUS_METRICS_PORT), named when the port cannot be had */
  readonly portSetting: string;
  readonly log: Logger;
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

const RELOAD_MS = 60_000;

async function readCertificate(
  files: CertificateFiles,
  purpose: string,
): Promise<ServingCertificate> {
  try {
    const [cert, key] = await Promise.all([
      readFile(files.certFile, 'utf8'),
      readFile(files.keyFile, 'utf8'),
    ]);
    return { cert, key };
  } catch (error) {
    throw new Error(
      `cannot read the ${purpose} certificate (${files.certFile}, ${files.keyFile}): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

export async function startHttpsServer(options: HttpsServerOptions): Promise<Listening> {
  const { log, purpose } = options;
  let served =
    options.tls === undefined
      ? selfSignedCertificate({
          commonName: `kubebus-${purpose.replace(/\W+/g, '-')}`,
          hosts: [...new Set([hostname(), 'localhost', '127.0.0.1'])],
        })
      : await readCertificate(options.tls, purpose);
  const server: Server = createServer(
    {
      cert: served.cert,
      key: served.key,
      minVersion: 'TLSv1.2',
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      // the timeouts are checked this often (Node's default: every 30 s, so a slow request
      // held a slot for up to a minute)
      connectionsCheckingInterval: 1_000,
    },
    options.handler,
  );
  const files = options.tls;
  const reload =
    files === undefined
      ? undefined
      : setInterval(() => {
          readCertificate(files, purpose).then(
            (next) => {
              if (next.cert === served.cert && next.key === served.key) return;
              try {
                // a pair read mid-rotation (or a bad Secret) throws: keep serving the last one
                server.setSecureContext({ cert: next.cert, key: next.key });
              } catch (error) {
                log.warn(
                  { err: error, cert: files.certFile },
                  `keeping the last ${purpose} certificate`,
                );
                return;
              }
              served = next;
              log.info({ cert: files.certFile }, `serving the renewed ${purpose} certificate`);
            },
            (error: unknown) => {
              log.warn({ err: error }, `keeping the last ${purpose} certificate`);
            },
          );
        }, RELOAD_MS);
  reload?.unref();
  const listening = await listen(server, options.host, options.port, {
    purpose,
    setting: options.portSetting,
  });
  return {
    port: listening.port,
    close: async () => {
      clearInterval(reload);
      await listening.close();
    },
  };
}
