// The conversion webhook of the operator's versioned resources: POST /convert
// over HTTPS (the apiserver calls webhooks over TLS only), the certificate
// mounted from a Secret or cert-manager and re-read on renewal
// (https-server.ts, as /metrics). The body is bounded; what is not a
// ConversionReview is refused with 400 and one line; a conversion that fails
// is answered Failure (conversion-review.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, type Registry } from 'prom-client';
import type { CustomResource } from '@kubebus/shared/definition';
import {
  startHttpsServer,
  type CertificateFiles,
  type Listening,
  type Logger,
} from '@kubebus/shared/obs';
import { CONVERT_PATH } from '../api/conversion-target.js';
import { answerConversionReview } from './conversion-review.js';

/** A list's objects come in one review: room for many, not for anything. */
export const MAX_REVIEW_BYTES = 64 * 1024 * 1024;

export interface ConversionWebhookOptions {
  readonly host: string;
  readonly port: number;
  readonly tls?: CertificateFiles | undefined;
  readonly resources: readonly CustomResource[];
  readonly log: Logger;
  readonly maxBytes?: number;
  /** where kubebus_conversion_reviews_total is counted */
  readonly registry?: Registry;
}

function reviewCounter(registry: Registry | undefined) {
  return new Counter({
    name: 'kubebus_conversion_reviews_total',
    help: 'ConversionReviews answered by the conversion webhook, by result: success, failure (a conversion failed), refused (not a review).',
    labelNames: ['result'],
    registers: registry === undefined ? [] : [registry],
  });
}

class TooLarge extends Error {}

function bodyOf(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(new TooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new TooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

function refuse(res: ServerResponse, status: number, text: string, headers = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`${text}\n`);
}

export function conversionHandler(options: ConversionWebhookOptions) {
  const limit = options.maxBytes ?? MAX_REVIEW_BYTES;
  const { log, resources } = options;
  const reviews = reviewCounter(options.registry);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path !== CONVERT_PATH) {
      refuse(res, 404, `not found: the conversion webhook is ${CONVERT_PATH}`);
      return;
    }
    if (req.method !== 'POST') {
      refuse(res, 405, 'method not allowed: POST a ConversionReview', { allow: 'POST' });
      return;
    }
    bodyOf(req, limit).then(
      (text) => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          reviews.inc({ result: 'refused' });
          refuse(res, 400, 'not a ConversionReview: the body is not JSON');
          return;
        }
        const answer = answerConversionReview(resources, body);
        if ('unreadable' in answer) {
          reviews.inc({ result: 'refused' });
          log.warn({ reason: answer.unreadable }, 'refused a conversion request');
          refuse(res, 400, answer.unreadable);
          return;
        }
        const { result } = answer.response;
        reviews.inc({ result: result.status === 'Success' ? 'success' : 'failure' });
        if (result.status === 'Failure')
          log.warn({ reason: result.message, uid: answer.response.uid }, 'conversion failed');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      },
      (error: unknown) => {
        reviews.inc({ result: 'refused' });
        if (error instanceof TooLarge) {
          refuse(res, 413, `a ConversionReview may not exceed ${limit} bytes`);
          return;
        }
        log.warn({ err: error }, 'reading a conversion request failed');
        if (!res.headersSent) refuse(res, 400, 'the request body could not be read');
      },
    );
  };
}

export function startConversionWebhook(options: ConversionWebhookOptions): Promise<Listening> {
  return startHttpsServer({
    host: options.host,
    port: options.port,
    tls: options.tls,
    purpose: 'conversion webhook',
    log: options.log,
    handler: conversionHandler(options),
  });
}
