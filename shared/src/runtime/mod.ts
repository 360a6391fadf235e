// The reconcile runtime: independent of the transport (bus) and of Kubernetes (kube).
export { backoffDelay } from './backoff.js';
export type { BackoffPolicy } from './backoff.js';
