// The reconcile runtime: the contract, the work loop and its retry semantics.
// It knows neither the transport (bus) nor Kubernetes (kube): adapters plug in.
export { backoffDelay } from './backoff.js';
export type { BackoffPolicy } from './backoff.js';
export { keyString } from './object-key.js';
export type { ObjectKey } from './object-key.js';
export { reconcilerFunc } from './reconciler.js';
export type { ReconcileRequest, Reconciler, RuntimeResult, WorkerContext } from './reconciler.js';
export { Slots } from './slots.js';
// the contract's context and terminal failure: the definition API's, one of each
export type { RuntimeContext } from '../definition/context.js';
export { TerminalError, isTerminalError } from '../definition/terminal-error.js';
export { decide, resultLabel } from './outcome.js';
export type { Action, Attempts, Outcome, ResultLabel, RetryPolicy } from './outcome.js';
export type { WorkItem } from './work-item.js';
export { AbandonedReconcile, isAbandonedReconcile } from './abandoned.js';
export { Controller } from './controller.js';
export type { ControllerOptions, ReconcileOutcome } from './controller.js';
export { runtimeMetrics } from './metrics.js';
export type { RuntimeMetrics } from './metrics.js';
