// The one place that owns retry semantics (controller-runtime's
// internal/controller switch): how a reconcile's outcome becomes an action on
// the message that asked for it.
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { isTerminalError, type ReconcileResult } from './reconciler.js';

export type Outcome =
  | { readonly ok: true; readonly result: ReconcileResult }
  | { readonly ok: false; readonly error: unknown };

export type Action =
  /** done: remove the message */
  | { readonly kind: 'ack' }
  /** try again after a delay (requeue-after, or backoff after an error) */
  | { readonly kind: 'retry'; readonly delayMs: number; readonly error?: unknown }
  /** never again until the object changes */
  | { readonly kind: 'terminal'; readonly error: unknown }
  /** the retry budget is spent: park it in the DLQ, mark the object Degraded */
  | { readonly kind: 'dead-letter'; readonly error: unknown };

export interface RetryPolicy extends BackoffPolicy {
  /** attempts before a failing reconcile is dead-lettered */
  readonly maxAttempts: number;
}

export type ResultLabel = 'success' | 'requeue_after' | 'error' | 'terminal_error' | 'dead_letter';

export function decide(
  outcome: Outcome,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): Action {
  if (outcome.ok) {
    const requeue = outcome.result?.requeueAfterMs;
    return requeue === undefined ? { kind: 'ack' } : { kind: 'retry', delayMs: requeue };
  }
  if (isTerminalError(outcome.error)) return { kind: 'terminal', error: outcome.error };
  if (attempt >= policy.maxAttempts) return { kind: 'dead-letter', error: outcome.error };
  return {
    kind: 'retry',
    delayMs: backoffDelay(policy, attempt - 1, random),
    error: outcome.error,
  };
}

/** The `result` label of controller_runtime_reconcile_total for an action. */
export function resultLabel(action: Action): ResultLabel {
  switch (action.kind) {
    case 'ack':
      return 'success';
    case 'retry':
      return action.error === undefined ? 'requeue_after' : 'error';
    case 'terminal':
      return 'terminal_error';
    case 'dead-letter':
      return 'dead_letter';
  }
}
