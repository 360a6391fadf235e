// A reconcile whose process is gone: `kubebus test` simulates a crash by
// parking a reconcile, and ends it with this when it stops the dead roles.
// The work loop treats it as it treats an aborted reconcile — the request goes
// back to the transport, uncounted, with no outcome (no status, no retry
// backoff, no dead letter) — so a graceful stop that drains in-flight work
// does not wait forever, and the dead process leaves no trace a real one would not.
export class AbandonedReconcile extends Error {
  override readonly name = 'AbandonedReconcile';
}

export function isAbandonedReconcile(error: unknown): error is AbandonedReconcile {
  return error instanceof AbandonedReconcile;
}
