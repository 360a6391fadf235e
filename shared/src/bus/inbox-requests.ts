// Requests answered on one inbox subscription per connection, for the hot
// path's JetStream calls (the watcher's acknowledged publishes, the
// reconciler's direct gets). nats.js makes each request a timer, a deferred,
// an entry in its request mux and its options copied, and its JetStream
// clients wrap the answer again: 36–41 µs of CPU per publish or direct get,
// against 8–10 µs here (20,000 of each to nats-server 2.15 on loopback, 16–64
// in flight). One timer looks at every waiting request a few times a second.
import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';

export interface InboxRequestOptions {
  readonly headers?: MsgHdrs;
  /** how long to wait for the last answer */
  readonly timeoutMs: number;
  /** what a request not answered in time says (a RequestTimedOut) */
  readonly timedOut?: () => string;
}

// Named as nats.js names them, so that failure-class.ts waits them out as
// NATS being unavailable (transient), never spending an object's retry budget.

/** No (last) answer within the request's timeout. */
export class RequestTimedOut extends Error {
  override readonly name = 'TimeoutError';
}

/** The connection closed while the request waited, or before it was sent. */
export class ConnectionClosed extends Error {
  override readonly name = 'ClosedConnectionError';
}

/** Nothing listens on the subject (nats-server's 503): JetStream not ready, the stream missing. */
export class NoResponders extends Error {
  override readonly name = 'NoResponders';
}

/**
 * Takes one answer of a request: a value ends the request with it, undefined
 * waits for the next answer, a throw fails the request.
 */
export type TakeAnswer<T> = (answer: Msg) => T | undefined;

interface Waiting {
  readonly deadline: number;
  readonly subject: string;
  readonly take: TakeAnswer<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timedOut: (() => string) | undefined;
}

/** How often waiting requests are looked at: a timeout fires up to this late. */
const SWEEP_MS = 250;

/** What sends a request and takes its answers: InboxRequests, or a stand-in in unit tests. */
export interface AnswerGatherer {
  gather<T>(
    subject: string,
    payload: Uint8Array,
    options: InboxRequestOptions,
    take: TakeAnswer<T>,
  ): Promise<T>;
}

/** The connection's inbox, or the gatherer given. */
export function gathererOf(via: NatsConnection | AnswerGatherer): AnswerGatherer {
  return typeof (via as Partial<AnswerGatherer>).gather === 'function'
    ? (via as AnswerGatherer)
    : InboxRequests.of(via as NatsConnection);
}

const perConnection = new WeakMap<NatsConnection, InboxRequests>();

export class InboxRequests implements AnswerGatherer {
  readonly #prefix: string;
  readonly #waiting = new Map<string, Waiting>();
  #next = 0;
  #sweep: NodeJS.Timeout | undefined;
  #closed: ConnectionClosed | undefined;

  /** The connection's one instance (its subscription lives as long as the connection). */
  static of(nc: NatsConnection): InboxRequests {
    let requests = perConnection.get(nc);
    if (requests === undefined) {
      requests = new InboxRequests(nc);
      perConnection.set(nc, requests);
    }
    return requests;
  }

  private constructor(private readonly nc: NatsConnection) {
    const inboxPrefix = (nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    this.#prefix = `${createInbox(inboxPrefix)}.`;
    const subscription = nc.subscribe(`${this.#prefix}*`, {
      callback: (error, message) => {
        if (error === null) this.#answered(message);
      },
    });
    void subscription.closed.then((error) => {
      this.#closed = new ConnectionClosed(
        `the NATS connection closed before an answer${error instanceof Error ? `: ${error.message}` : ''}`,
      );
      // a subscription the server ended on an open connection (a permissions
      // violation): the next request subscribes again instead of failing for
      // ever, and what waited fails with the server's reason, not as an outage
      if (perConnection.get(nc) === this) perConnection.delete(nc);
      const failure = error instanceof Error && !nc.isClosed() ? error : this.#closed;
      for (const waiting of this.#waiting.values()) waiting.reject(failure);
      this.#waiting.clear();
      this.#stopSweepIfIdle();
    });
  }

  /** The first answer, whatever it is (a status answer included). */
  request(subject: string, payload: Uint8Array, options: InboxRequestOptions): Promise<Msg> {
    return this.gather(subject, payload, options, (answer) => answer);
  }

  /** Answers handed to `take` until it returns a value. */
  gather<T>(
    subject: string,
    payload: Uint8Array,
    options: InboxRequestOptions,
    take: TakeAnswer<T>,
  ): Promise<T> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    const token = (this.#next++).toString(36);
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(token, {
        deadline: performance.now() + options.timeoutMs,
        subject,
        take,
        resolve: resolve as (value: unknown) => void,
        reject,
        timedOut: options.timedOut,
      });
      this.#sweep ??= setInterval(() => {
        this.#timeOut();
      }, SWEEP_MS).unref();
      try {
        this.nc.publish(subject, payload, {
          ...(options.headers === undefined ? {} : { headers: options.headers }),
          reply: this.#prefix + token,
        });
      } catch (error) {
        this.#waiting.delete(token);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  #answered(message: Msg): void {
    const token = message.subject.slice(this.#prefix.length);
    const waiting = this.#waiting.get(token);
    if (waiting === undefined) return; // timed out already
    let value: unknown;
    try {
      value = waiting.take(message);
    } catch (error) {
      this.#waiting.delete(token);
      waiting.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (value === undefined) return;
    this.#waiting.delete(token);
    waiting.resolve(value);
  }

  #timeOut(): void {
    const now = performance.now();
    for (const [token, waiting] of this.#waiting) {
      if (waiting.deadline > now) continue;
      this.#waiting.delete(token);
      waiting.reject(
        new RequestTimedOut(waiting.timedOut?.() ?? `no answer from ${waiting.subject} in time`),
      );
    }
    this.#stopSweepIfIdle();
  }

  #stopSweepIfIdle(): void {
    if (this.#waiting.size > 0 || this.#sweep === undefined) return;
    clearInterval(this.#sweep);
    this.#sweep = undefined;
  }
}
