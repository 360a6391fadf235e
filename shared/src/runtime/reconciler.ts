// The reconcile contract, in the spirit of controller-runtime's
// pkg/reconcile: a key and a context in; nothing, or a requeue-after, out. A
// thrown error is retried with backoff; a TerminalError is not retried. The
// context and TerminalError are the definition API's: one for every reconciler.
import type { RuntimeContext } from '../definition/context.js';
import type { ObjectKey } from './object-key.js';

export interface ReconcileRequest {
  readonly key: ObjectKey;
  /**
   * The request's payload, for controllers over intents (the status writer).
   * Object reconcilers ignore it: they read the current state, never the event.
   */
  readonly body?: Uint8Array;
}

/**
 * Nothing (done), a requeue-after, a note that nothing was done and why
 * (recorded as the outcome `skipped`: an object left parked, a status that
 * was already in place), or the resourceVersion the reconcile's write left
 * the object at (so `kubebus history` can say which revision it produced).
 */
export type RuntimeResult =
  | undefined
  | { readonly requeueAfterMs: number; readonly skipped?: never; readonly wrote?: never }
  | { readonly skipped: string; readonly requeueAfterMs?: never; readonly wrote?: never }
  | { readonly wrote: string; readonly requeueAfterMs?: never; readonly skipped?: never };

/** The runtime's context, with what only kubebus' own reconcilers use. */
export interface WorkerContext extends RuntimeContext {
  /**
   * The rest of this reconcile waits on work another pool bounds (the status
   * writer's, ADR 0028): its worker takes the next object meanwhile. The
   * object stays busy, and its request unsettled, until the reconcile returns.
   */
  readonly releaseWorker?: () => void;
  /**
   * Failures in a row before this try, of any class: a dependency's outage
   * does not advance `attempt`, and shows on the object by this count.
   */
  readonly failuresInARow?: number;
}

export interface Reconciler {
  reconcile(request: ReconcileRequest, context: WorkerContext): Promise<RuntimeResult>;
}

/** A Reconciler from a function (controller-runtime's reconcile.Func). */
export function reconcilerFunc(
  fn: (request: ReconcileRequest, context: WorkerContext) => Promise<RuntimeResult>,
): Reconciler {
  return { reconcile: fn };
}
