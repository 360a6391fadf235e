// A small HTTP(S) client for readiness probes and admin calls (node:https takes
// the test bed's CA and client certificate directly).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';

export interface HttpResponse {
  readonly status: number;
  readonly body: string;
}

export interface TlsOptions {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly rejectUnauthorized?: boolean;
}

export function httpCall(
  url: string,
  options: {
    method?: string;
    body?: string;
    /** of the body; JSON unless said */
    contentType?: string;
    tls?: TlsOptions;
    timeoutMs?: number;
  } = {},
): Promise<HttpResponse> {
  const target = new URL(url);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: options.method ?? 'GET',
    timeout: options.timeoutMs ?? 5_000,
    headers:
      options.body === undefined
        ? {}
        : { 'content-type': options.contentType ?? 'application/json' },
    ...options.tls,
  };
  return new Promise((resolve, reject) => {
    const req = request(target, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout calling ${url}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
