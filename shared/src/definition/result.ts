// What an operator's reconcile returns, and what the status shows while a
// spec is invalid: the status and conditions to publish. The runtime adds
// observedGeneration, lastTransitionTime, Ready and Degraded.
import type { ConditionStatus } from './objects.js';

/** A condition a reconcile reports; lastTransitionTime and observedGeneration are the runtime's. */
export interface ConditionReport {
  readonly type: string;
  readonly status: ConditionStatus | boolean;
  readonly reason: string;
  readonly message?: string;
}

/** What a reconcile returns. Nothing means: reconciled, Ready=True, no requeue. */
export interface ReconcileResult<Status> {
  /** the status to show (parsed by the resource's status schema); default: unchanged */
  readonly status?: Omit<Status, 'conditions' | 'observedGeneration'>;
  /** the Ready condition; default True with reason Reconciled */
  readonly ready?: Omit<ConditionReport, 'type'>;
  /** further conditions of your own */
  readonly conditions?: readonly ConditionReport[];
  /** reconcile again after this many milliseconds even when nothing changes */
  readonly requeueAfterMs?: number;
}

/**
 * What a finalize returns when it is not done yet (a child still terminating):
 * the finalizer stays and finalize runs again after the delay, as a requeue,
 * not a failure: no attempt counted, never dead-lettered. Nothing means: cleaned
 * up, the finalizer goes. Meanwhile the object shows Ready=False, reason
 * Finalizing, with `message`, and `status` over its status as it is.
 */
export interface FinalizeResult<Status = Record<string, unknown>> {
  /** finalize again after this many milliseconds (at least 1 s) */
  readonly requeueAfterMs: number;
  /** what it waits for (`2 backups still being deleted`): the Ready condition's message */
  readonly message?: string;
  /** fields of the status to show meanwhile (a phase, a count), checked by its schema */
  readonly status?: Partial<Omit<Status, 'conditions' | 'observedGeneration'>>;
}

/** What the status shows while the spec is invalid, besides Ready=False/InvalidSpec. */
export interface InvalidSpecReport<Status> {
  readonly status?: Partial<Omit<Status, 'conditions' | 'observedGeneration'>>;
  readonly conditions?: readonly ConditionReport[];
}
