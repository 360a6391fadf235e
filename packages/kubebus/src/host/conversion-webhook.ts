// The conversion webhook of the operator's versioned resources: POST /convert
// over HTTPS (the apiserver calls webhooks over TLS only), the certificate
// mounted from a Secret or cert-manager and re-read on renewal
// (https-server.ts, as /metrics). The body is bounded; what is not a
// ConversionReview is refused with 400 and one line; a conversion that fails
// is answered Failure (conversion-review.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CustomResource } from '@kubebus/shared/definition';
import {
  startHttpsServer,
  type CertificateFiles,
  type Listening,
  type Logger,
} from '@kubebus/shared/obs';
import { CONVERT_PATH } from '../api/conversion-target.js';
import { answerConversionReview } from './conversion-review.js';
import { ReviewSlots } from './review-slots.js';

/**
 * A list's objects come in one review: room for many, not for anything
 * (KUBEBUS_WEBHOOK_MAX_BYTES). The reviews in flight (two per peer, eight in
 * all) hold at most that many times this, plus what JSON.parse makes of it.
 */
export const DEFAULT_REVIEW_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Reviews read and converted at once from one peer; more wait for a turn
 * (review-slots.ts), then are answered 503 with Retry-After (as the
 * CloudEvents sink). Per peer: the port is open to the cluster (the
 * apiserver must reach it), and two slow senders elsewhere must not take
 * the apiserver's turn. In all, a few peers' worth.
 */
export const MAX_REVIEWS_IN_FLIGHT = 2;
const PEERS_IN_FLIGHT = 4;
/** Reviews of one peer waiting for a turn: a burst of the apiserver's, side by side. */
const WAITING_PER_PEER = 32;
/**
 * How long a review waits for a turn: a burst's is served within
 * milliseconds; under sustained overload each of the apiserver's retries
 * (after Retry-After, up to ten) costs this plus a second.
 */
export const TURN_WAIT_MS = 1_000;

/** How long a review's body may take to arrive once its head has: the apiserver sends it at once. */
export const REVIEW_BODY_DEADLINE_MS = 5_000;

export interface ConversionWebhookOptions {
  readonly host: string;
  readonly port: number;
  readonly tls?: CertificateFiles | undefined;
  readonly resources: readonly CustomResource[];
  readonly log: Logger;
  readonly maxBytes?: number;
  readonly maxInFlight?: number;
  readonly bodyDeadlineMs?: number;
  /** how long a review past the caps waits for a turn before its 503 */
  readonly turnWaitMs?: number;
  /** where kubebus_conversion_reviews_total is counted */
  readonly registry?: Registry;
}

function reviewCounter(registry: Registry | undefined) {
  return new Counter({
    name: 'kubebus_conversion_reviews_total',
    help: 'ConversionReviews answered by the conversion webhook, by result: success, failure (a conversion failed), refused (not a review, too large, too many at once), error (the webhook failed).',
    labelNames: ['result'],
    registers: registry === undefined ? [] : [registry],
  });
}

/**
 * One 'close' listener per connection, whatever the reviews pipelined on it:
 * each waiting review adding its own would warn of a leak past ten.
 */
const socketClosers = new WeakMap<Socket, Set<() => void>>();
function whenSocketCloses(socket: Socket, closed: () => void): () => void {
  if (socket.destroyed) {
    queueMicrotask(closed);
    return () => undefined;
  }
  let closers = socketClosers.get(socket);
  if (closers === undefined) {
    const set = new Set<() => void>();
    closers = set;
    socketClosers.set(socket, set);
    socket.once('close', () => {
      for (const close of [...set]) close();
      set.clear();
    });
  }
  closers.add(closed);
  return () => closers.delete(closed);
}

function turnGauges(registry: Registry | undefined, slots: ReviewSlots): void {
  const registers = registry === undefined ? [] : [registry];
  new Gauge({
    name: 'kubebus_conversion_reviews_in_flight',
    help: 'ConversionReviews being read and converted.',
    registers,
    collect() {
      this.set(slots.inFlight);
    },
  });
  new Gauge({
    name: 'kubebus_conversion_reviews_waiting',
    help: 'ConversionReviews waiting for a turn (at most 32 per peer, 128 in all, each for up to a second).',
    registers,
    collect() {
      this.set(slots.waiting);
    },
  });
}

/**
 * The body, or undefined past `limit` (declared or sent). Past the limit the
 * rest is no longer kept; the caller answers, then closes the connection
 * (destroying it before the answer is written would leave a chunked sender
 * with a reset, not a 413).
 */
function bodyOf(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        req.off('data', onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function refuse(res: ServerResponse, status: number, text: string, headers = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`${text}\n`);
}

/** Answers, then closes the connection once the answer is written: the rest of the body is not read. */
function refuseAndClose(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  text: string,
  headers = {},
): void {
  res.once('finish', () => req.destroy());
  refuse(res, status, text, { connection: 'close', ...headers });
}

export function conversionHandler(options: ConversionWebhookOptions) {
  const limit = options.maxBytes ?? DEFAULT_REVIEW_MAX_BYTES;
  const maxInFlight = options.maxInFlight ?? MAX_REVIEWS_IN_FLIGHT;
  const bodyDeadlineMs = options.bodyDeadlineMs ?? REVIEW_BODY_DEADLINE_MS;
  const { log, resources } = options;
  const reviews = reviewCounter(options.registry);
  const slots = new ReviewSlots({
    perPeer: maxInFlight,
    total: maxInFlight * PEERS_IN_FLIGHT,
    waitingPerPeer: WAITING_PER_PEER,
    waitingTotal: WAITING_PER_PEER * PEERS_IN_FLIGHT,
    waitMs: options.turnWaitMs ?? TURN_WAIT_MS,
  });
  turnGauges(options.registry, slots);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(resolve, bodyDeadlineMs, 'late');
    });
    const body = await Promise.race([bodyOf(req, limit), late]).finally(() => {
      clearTimeout(timer);
    });
    if (body === 'late') {
      reviews.inc({ result: 'refused' });
      refuseAndClose(
        req,
        res,
        408,
        `the ConversionReview's body did not arrive within ${String(bodyDeadlineMs / 1000)} s`,
      );
      return;
    }
    if (body === undefined) {
      reviews.inc({ result: 'refused' });
      refuseAndClose(req, res, 413, `a ConversionReview may not exceed ${limit} bytes`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      reviews.inc({ result: 'refused' });
      refuse(res, 400, 'not a ConversionReview: the body is not JSON');
      return;
    }
    const answer = answerConversionReview(resources, parsed);
    if ('unreadable' in answer) {
      reviews.inc({ result: 'refused' });
      log.warn({ reason: answer.unreadable }, 'refused a conversion request');
      refuse(res, 400, answer.unreadable);
      return;
    }
    // before the head is written: an answer that cannot be serialized (a BigInt, a cycle) is a 500
    const text = JSON.stringify(answer);
    const { result } = answer.response;
    reviews.inc({ result: result.status === 'Success' ? 'success' : 'failure' });
    if (result.status === 'Failure')
      log.warn({ reason: result.message, uid: answer.response.uid }, 'conversion failed');
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    try {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path !== CONVERT_PATH) {
        refuse(res, 404, `not found: the conversion webhook is ${CONVERT_PATH}`);
        return;
      }
      if (req.method !== 'POST') {
        refuse(res, 405, 'method not allowed: POST a ConversionReview', { allow: 'POST' });
        return;
      }
      const peer = req.socket.remoteAddress ?? '';
      // a turn goes back once, when the answer ends or the connection drops, whichever
      // comes first: Node 22 fires no 'close' on a pipelined response queued behind
      // another when the connection drops
      let held = false;
      let released = false;
      const gone = new AbortController();
      const { socket } = req;
      const onClose = () => {
        res.off('close', onClose);
        offSocket();
        gone.abort();
        if (held && !released) {
          released = true;
          slots.release(peer);
        }
      };
      res.once('close', onClose);
      const offSocket = whenSocketCloses(socket, onClose);
      slots
        .take(peer, gone.signal)
        .then((turn) => {
          if (turn !== true) {
            reviews.inc({ result: 'refused' });
            const full =
              turn === 'peer'
                ? `${maxInFlight} from this peer`
                : `${maxInFlight * PEERS_IN_FLIGHT} in all`;
            refuseAndClose(req, res, 503, `${full} ConversionReviews in flight; retry`, {
              'retry-after': '1',
            });
            return;
          }
          held = true;
          if (gone.signal.aborted) {
            released = true;
            slots.release(peer);
            return;
          }
          return handle(req, res);
        })
        .catch((error: unknown) => {
          failed(req, res, error);
        });
    } catch (error) {
      failed(req, res, error);
    }
  };

  /** Whatever went wrong answers 500 in one line (or closes a started answer); it never escapes. */
  function failed(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    try {
      // the sender hung up before its body was in: its doing, not the webhook's failure
      if ((error as { code?: unknown } | undefined)?.code === 'ECONNRESET' && req.destroyed) {
        log.debug({ err: error }, 'a ConversionReview sender hung up before its body was in');
        res.destroy();
        return;
      }
      reviews.inc({ result: 'error' });
      log.error({ err: error }, 'the conversion webhook failed');
      if (res.headersSent) res.destroy();
      else
        refuseAndClose(
          req,
          res,
          500,
          `the conversion webhook failed: ${(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''}`,
        );
    } catch {
      res.destroy();
    }
  }
}

export function startConversionWebhook(options: ConversionWebhookOptions): Promise<Listening> {
  return startHttpsServer({
    host: options.host,
    port: options.port,
    tls: options.tls,
    purpose: 'conversion webhook',
    portSetting: 'KUBEBUS_WEBHOOK_PORT',
    log: options.log,
    handler: conversionHandler(options),
  });
}
