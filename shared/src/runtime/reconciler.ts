// The reconcile contract, in the spirit of controller-runtime's
// pkg/reconcile: a key and a context in; nothing, or a requeue-after, out. A
// thrown error is retried with backoff; a TerminalError is not retried.
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from './object-key.js';

export interface ReconcileRequest {
  readonly key: ObjectKey;
  /**
   * The request's payload, for controllers over intents (the status writer).
   * Object reconcilers ignore it: they read the current state, never the event.
   */
  readonly body?: Uint8Array;
}

export interface ReconcileContext {
  /** aborted when the runtime shuts down or loses the object's partition */
  readonly signal: AbortSignal;
  /** carries the reconcile id, the key and the trace */
  readonly log: Logger;
  readonly reconcileId: string;
  /** W3C traceparent of this reconcile (a span of the change's trace) */
  readonly traceparent: string;
  /** 1 on the first try, then counts retries */
  readonly attempt: number;
}

/**
 * Nothing (done), a requeue-after, a note that nothing was done and why
 * (recorded as the outcome `skipped`: an object left parked, a status that
 * was already in place), or the resourceVersion the reconcile's write left
 * the object at (so `kubebus history` can say which revision it produced).
 */
export type ReconcileResult =
  | undefined
  | { readonly requeueAfterMs: number; readonly skipped?: never; readonly wrote?: never }
  | { readonly skipped: string; readonly requeueAfterMs?: never; readonly wrote?: never }
  | { readonly wrote: string; readonly requeueAfterMs?: never; readonly skipped?: never };

export interface Reconciler {
  reconcile(request: ReconcileRequest, context: ReconcileContext): Promise<ReconcileResult>;
}

/** A Reconciler from a function (controller-runtime's reconcile.Func). */
export function reconcilerFunc(
  fn: (request: ReconcileRequest, context: ReconcileContext) => Promise<ReconcileResult>,
): Reconciler {
  return { reconcile: fn };
}

/** A failure retrying cannot fix: the object is not reconciled again until it changes. */
export class TerminalError extends KubebusError {
  override readonly name = 'TerminalError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCodes.Terminal, message, options);
  }
}

export function isTerminalError(error: unknown): error is TerminalError {
  return error instanceof TerminalError;
}
