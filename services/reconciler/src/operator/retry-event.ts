// A reconcile that keeps failing says so on its object before its retry
// budget is spent: a Warning Event (`kubectl describe`, `kubectl events`) at
// some of its failed attempts, with the first line of the error, and
// Ready=False (`kubectl get`) with that line. kopf posts one Event per failed
// handler run; controller-runtime only logs.
import { messageWithCause } from '@kubebus/shared/errors';

/** The reason of the Warning Event a repeated failure records. */
export const RETRYING = 'ReconcileRetrying';

/**
 * Whether a failed attempt is said on the object: the 2nd, 4th, 8th… — not
 * the first (a write that raced another is retried at once and passes), and
 * not every one (an object failing for an hour records ~10, not hundreds).
 */
export function retryAnnounced(attempt: number): boolean {
  return attempt >= 2 && (attempt & (attempt - 1)) === 0;
}

/** The first line of what failed (its first non-empty one, else its name): the Ready condition's message while it is retried. */
export function retryMessage(error: unknown): string {
  // with its first cause's reason: "fetch failed" alone says nothing (first-cause.ts)
  const text = messageWithCause(error);
  const line = text.split('\n').find((part) => part.trim() !== '');
  return line ?? (error instanceof Error ? error.name : 'failed');
}

/** The Event's note: which attempt, and the first line of what failed. */
export function retryNote(attempt: number, error: unknown): string {
  return `attempt ${String(attempt)} failed, retried with backoff: ${retryMessage(error)}`;
}

/**
 * The status the apiserver answered this object's request with, when that
 * answer is about the request and retrying is all that can be done: a 500 or
 * 502 (an admission or conversion webhook that does not answer), a 404 of the
 * namespace it writes into (not there yet), a 403 of one being deleted. Such
 * a failure is waited out without limit, so it says so on the object. The
 * whole cluster's troubles — no answer, throttling (429), overload and
 * timeouts (503, 504, 408, etcd), a stale token (401) — and NATS down are the
 * logs' and metrics' to say: every object would say them at once.
 */
export function answeredUnavailable(error: unknown): number | undefined {
  for (
    let e: unknown = error, depth = 0;
    typeof e === 'object' && e !== null && depth < 8;
    depth++
  ) {
    const { name, status, message, cause, details } = e as {
      name?: unknown;
      status?: unknown;
      message?: unknown;
      cause?: unknown;
      details?: { kind?: unknown };
    };
    if (name === 'KubeApiError' && typeof status === 'number')
      return ABOUT_THE_REQUEST.has(status) &&
        // a 404 of the namespace, not of a resource the apiserver does not serve
        (status !== 404 || details?.kind === 'namespaces') &&
        !(typeof message === 'string' && /etcdserver|etcd cluster/i.test(message))
        ? status
        : undefined;
    e = cause;
  }
  return undefined;
}

/** Answers about one request, not the cluster's state. */
const ABOUT_THE_REQUEST = new Set([403, 404, 500, 502]);

/** Whether a try that failed after `failuresInARow` others, without counting, is said on the object: the 4th, 8th, 16th… */
export function waitAnnounced(failuresInARow: number): boolean {
  const failures = failuresInARow + 1;
  return failures >= 4 && (failures & (failures - 1)) === 0;
}

/** The Event's note for a failure that is waited out. */
export function waitNote(failures: number, status: number, error: unknown): string {
  return `failed ${String(failures)} times in a row, the apiserver answering ${String(status)}; retried without limit, never dead-lettered: ${retryMessage(error)}`;
}
