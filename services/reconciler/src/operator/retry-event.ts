// A reconcile that keeps failing says so on its object before its retry
// budget is spent: a Warning Event (`kubectl describe`, `kubectl events`) at
// some of its failed attempts, with the first line of the error, and
// Ready=False (`kubectl get`) with that line. kopf posts one Event per failed
// handler run; controller-runtime only logs.

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
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split('\n').find((part) => part.trim() !== '');
  return line ?? (error instanceof Error ? error.name : 'failed');
}

/** The Event's note: which attempt, and the first line of what failed. */
export function retryNote(attempt: number, error: unknown): string {
  return `attempt ${String(attempt)} failed, retried with backoff: ${retryMessage(error)}`;
}
