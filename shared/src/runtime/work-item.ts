// One request for a reconcile, as a transport delivers it. The runtime decides;
// the transport's adapter carries the decision out (for JetStream: ack, nak
// with a delay, term, working).
import type { ObjectKey } from './object-key.js';

/** What a retry carries of the failures before it. */
export interface Failures {
  /** failures counted against the retry budget (transient ones are not) */
  readonly attempts: number;
  /** failures in a row of any kind, for the backoff */
  readonly streak: number;
  /** of the attempts, those an outside system failed (counted and shown, but spending no budget) */
  readonly external?: number | undefined;
}

export interface WorkItem {
  readonly key: ObjectKey;
  /**
   * The transport's identity of the request (JetStream: stream and sequence).
   * Two items with the same id are one request delivered twice: settling
   * either settles both, so the runtime never acks one in place of the other.
   */
  readonly id?: string;
  /** when the request was made (ms since the epoch), for the queue-duration metric */
  readonly enqueuedAt: number;
  readonly traceparent?: string;
  readonly eventId?: string;
  /** the object whose change asked for it, when another than `key` (`secrets shop/db`) */
  readonly cause?: string;
  /** the request's payload, for controllers that need more than the key */
  readonly body?: Uint8Array;
  /** the failures of the request this one is the retry of, where it waited apart (`later`) */
  readonly failedBefore?: Failures;
  /**
   * Present when an earlier delivery of the request went unanswered (its
   * process may have died running it): such a request runs with no other such
   * request beside it, and this is awaited first, so that if the process dies
   * now the death is blamed on this request alone.
   */
  readonly started?: () => Promise<void>;
  /**
   * Whether this process may still act on the request now (its partition's
   * lease still trusted): asked before each write of its reconcile, so a
   * process paused as a whole past its lease (a long GC pause, SIGSTOP)
   * writes nothing when it goes on — not even before its fence timer runs,
   * which may come after the code or I/O that resumes the reconcile. A
   * failure after the lease lapsed is handed back, not counted.
   */
  readonly mayAct?: () => boolean;
  /** done: forget the request */
  ack(): void;
  /** deliver the request again after `delayMs` */
  retry(delayMs: number): void;
  /**
   * Done for now; a new request for the object after `delayMs` (a requeue the
   * reconcile asked for, or a retry carrying its `failures`). Where the
   * transport has it, the wait holds no delivery (JetStream:
   * later-requeues.ts); else it is `retry`.
   */
  later?(delayMs: number, failures?: Failures): void;
  /** never deliver it again */
  terminate(reason: string): void;
  /** still being worked on (or waiting for the key): extend the lease on it */
  inProgress(): void;
}
