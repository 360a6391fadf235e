// A finalize that is not done yet (a child still terminating) says so with
// `{ requeueAfterMs }`: the finalizer stays and finalize runs again after the
// delay, as reconcile's requeue does (ADR 0034), not as a failure, so waiting
// on something slow never spends the retry budget nor dead-letters the object.
import type { KubeObject } from '@kubebus/shared/events';
import { notReadyStatus, type Status } from './status.js';

/**
 * The shortest wait: a finalize that asks for less must not spin, and a wait
 * of a second or more waits outside the object's partition (ADR 0034).
 */
export const MIN_FINALIZE_WAIT_MS = 1_000;

export const FINALIZING = 'Finalizing';

/**
 * How long the finalize asked to wait, or undefined when it is done. As for
 * reconcile's requeueAfterMs, only a positive number waits (0 is "no wait":
 * `pending ? 2_000 : 0` reads the same in both), and no wait is under 1 s.
 */
export function finalizeWait(result: unknown): number | undefined {
  if (typeof result !== 'object' || result === null || !('requeueAfterMs' in result))
    return undefined;
  const asked = result.requeueAfterMs;
  if (typeof asked !== 'number' || !(asked > 0)) return undefined;
  return Number.isFinite(asked) ? Math.max(asked, MIN_FINALIZE_WAIT_MS) : MIN_FINALIZE_WAIT_MS;
}

/**
 * The status of an object whose finalize waits: Ready=False, reason
 * Finalizing, the rest as it is. The message names no delay, so a finalize
 * asked again writes nothing new (and starts no reconcile of its own).
 */
export function finalizingStatus(object: KubeObject, finalizer: string, now = new Date()): Status {
  return notReadyStatus(
    object,
    FINALIZING,
    `finalize is not done: it runs again later, and the finalizer ${finalizer} stays until it is`,
    now,
  );
}
