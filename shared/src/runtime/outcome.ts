// The one place that owns retry semantics (controller-runtime's
// internal/controller switch): how a reconcile's outcome becomes an action on
// the message that asked for it. Whose fault a failure is decides its budget:
// a dependency that is down, or the operator's own RBAC refusing, is waited
// out without limit, a failure the object causes gets a few tries, anything
// else the full budget.
import { isOperatorError } from '../errors/error-origin.js';
import { classifyFailure, type FailureClass } from '../errors/failure-class.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { isTerminalError } from '../definition/terminal-error.js';
import type { RuntimeResult } from './reconciler.js';

export type Outcome =
  | { readonly ok: true; readonly result: RuntimeResult }
  | { readonly ok: false; readonly error: unknown };

export type Action =
  /** done: remove the message */
  | { readonly kind: 'ack' }
  /** try again after a delay (requeue-after, or backoff after an error) */
  | {
      readonly kind: 'retry';
      readonly delayMs: number;
      readonly error?: unknown;
      /** a dependency was down, or the operator's RBAC refused: the try does not count against the budget */
      readonly transient?: true;
      /** the operator's own RBAC refused the request: waited out like a dependency, an admin's to fix */
      readonly forbidden?: true;
      /** waiting for something under way (another reconcile's external call): after the time it named, no backoff */
      readonly waiting?: true;
      /** an outside system the operator's own code calls is unreachable: counted, never dead-lettered */
      readonly external?: true;
      /** after an error that counts: the attempts it has in all (object failures get fewer) */
      readonly budget?: number;
    }
  /** never again until the object changes */
  | { readonly kind: 'terminal'; readonly error: unknown }
  /** the retry budget is spent: park it in the DLQ, mark the object Degraded */
  | { readonly kind: 'dead-letter'; readonly error: unknown };

export interface RetryPolicy extends BackoffPolicy {
  /** attempts before a failing reconcile is dead-lettered */
  readonly maxAttempts: number;
  /** attempts for a failure the object causes (e.g. a 422 on its own write); default 3 */
  readonly objectAttempts?: number;
}

/** Where a request stands: counted failures so far, and failures in a row of any kind. */
export interface Attempts {
  /** 1 on the first try; transient failures do not advance it */
  readonly attempt: number;
  /** failures in a row before this try, transient ones included (for the backoff) */
  readonly streak: number;
  /** of the counted failures before this try, those an outside system failed: they spend no budget */
  readonly external?: number;
}

export type ResultLabel = 'success' | 'requeue_after' | 'error' | 'terminal_error' | 'dead_letter';

export function decide(
  outcome: Outcome,
  attempts: Attempts,
  policy: RetryPolicy,
  classify: (error: unknown) => FailureClass = classifyFailure,
  random: () => number = Math.random,
): Action {
  if (outcome.ok) {
    const requeue = outcome.result?.requeueAfterMs;
    return requeue === undefined ? { kind: 'ack' } : { kind: 'retry', delayMs: requeue };
  }
  const { error } = outcome;
  if (isTerminalError(error)) return { kind: 'terminal', error };
  // something under way elsewhere says when to look again: a wait, not a failure
  const waitMs = waitOf(error);
  if (waitMs !== undefined)
    return { kind: 'retry', delayMs: waitMs, error, transient: true, waiting: true };
  const delayMs = backoffDelay(policy, attempts.streak, random);
  const failureClass = classify(error);
  if (failureClass === 'transient') return { kind: 'retry', delayMs, error, transient: true };
  // never the object's fault: retried until an admin applies the RBAC, as controller-runtime does
  if (failureClass === 'forbidden')
    return { kind: 'retry', delayMs, error, transient: true, forbidden: true };
  // the operator's outside system is down: each try counts (and shows on the object), none
  // parks it — a dependency still starting (its own database) is waited for, as before
  if (failureClass === 'external') return { kind: 'retry', delayMs, error, external: true };
  const budget =
    failureClass === 'object'
      ? Math.min(policy.objectAttempts ?? 3, policy.maxAttempts)
      : policy.maxAttempts;
  // an outside system's outage before this try spent none of it: a database that was starting
  // and now answers with an error gets the whole budget
  if (attempts.attempt - (attempts.external ?? 0) >= budget) return { kind: 'dead-letter', error };
  return { kind: 'retry', delayMs, error, budget };
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

/** How long an error of kubebus' asks to be waited out (`waitMs` on it or a cause), if it does. */
function waitOf(error: unknown): number | undefined {
  if (isOperatorError(error)) return undefined;
  for (
    let e: unknown = error, depth = 0;
    typeof e === 'object' && e !== null && depth < 8;
    depth++
  ) {
    const waitMs = (e as { waitMs?: unknown }).waitMs;
    if (typeof waitMs === 'number' && Number.isFinite(waitMs) && waitMs >= 0) return waitMs;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
