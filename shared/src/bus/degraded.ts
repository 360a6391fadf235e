// What the object shows once its retry budget is spent: its current status
// with Degraded=True and Ready=False (reason RetryBudgetSpent) and the error,
// so a person sees it in `kubectl get` and `kubectl wait`, without reading logs.
// That condition also parks the object: its own Degraded write, or any other
// change that leaves the spec (generation) alone, does not start another
// round of retries — a spec change, `kubebus dlq redrive`, or a new version
// of the operator (its upgrade sweep: the fix may be in the code; not for an
// object that killed its process) does.
import { cutChars, publicText } from '../errors/public-text.js';
import type { KubeObject } from '../events/kube-object.js';
import { setCondition, type Condition } from '../kube/conditions.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { ReconcileRequest } from '../runtime/reconciler.js';
import type { StatusPublisher } from './status-intent.js';
import { WorkMarkSchema } from './work-mark.js';

export const DEAD_LETTERED = 'RetryBudgetSpent';

/** How the Degraded message of an object that killed its process begins (the crash bound, ADR 0022). */
export const CRASHED_PROCESS = 'the process died while reconciling it';

export async function publishDegraded(
  status: StatusPublisher,
  key: ObjectKey,
  object: KubeObject,
  reason: string,
  traceparent: string | undefined,
): Promise<void> {
  const current = (object['status'] ?? {}) as { conditions?: Condition[] } & Record<
    string,
    unknown
  >;
  const parked = {
    status: 'True' as const,
    reason: DEAD_LETTERED,
    // redacted before the cut: a cut password would no longer look like one
    message: cutChars(publicText(reason), 2_000),
    observedGeneration: object.metadata.generation ?? 0,
  };
  // Ready keeps no stale True: the object is not being reconciled any more
  const conditions = setCondition(
    setCondition(current.conditions, { type: 'Degraded', ...parked }),
    { type: 'Ready', ...parked, status: 'False' },
  );
  await status.publish({
    key,
    apiVersion: object.apiVersion,
    kind: object.kind,
    uid: object.metadata.uid,
    observedGeneration: object.metadata.generation ?? 0,
    status: { ...current, conditions },
    ...(traceparent === undefined ? {} : { traceparent }),
  });
}

/** Dead-lettered at its current generation, and not being deleted. */
export function isParked(object: KubeObject): boolean {
  if (object.metadata.deletionTimestamp !== undefined) return false;
  const conditions = (object['status'] as { conditions?: Condition[] } | undefined)?.conditions;
  const degraded = conditions?.find((c) => c.type === 'Degraded');
  return (
    degraded?.status === 'True' &&
    degraded.reason === DEAD_LETTERED &&
    degraded.observedGeneration === (object.metadata.generation ?? 0)
  );
}

/** Whether the object was parked for killing its process, not for a spent retry budget. */
export function crashedItsProcess(object: KubeObject): boolean {
  const conditions = (object['status'] as { conditions?: Condition[] } | undefined)?.conditions;
  const message = conditions?.find((c) => c.type === 'Degraded')?.message ?? '';
  return message.startsWith(CRASHED_PROCESS);
}

/**
 * Whether the mark tries the parked object again: a re-drive always; a
 * sweep (a new version, a repartition: the fix may be in the code) unless
 * the object killed its process — every replica of a version that still
 * does would die on it again, and a rollout's replicas hand partitions to
 * each other, each hand-over a sweep.
 */
function retriesParked(body: Uint8Array | undefined, object: KubeObject): boolean {
  if (body === undefined) return false;
  try {
    const mark = WorkMarkSchema.parse(JSON.parse(new TextDecoder().decode(body)));
    return mark.reason === 'redrive' || (mark.reason === 'upgrade' && !crashedItsProcess(object));
  } catch {
    return false;
  }
}

/** True when the object is parked and the request does not try it again: nothing to do. */
export function leaveParked(request: ReconcileRequest, object: KubeObject): boolean {
  return isParked(object) && !retriesParked(request.body, object);
}

/**
 * Whether the mark is of a change of the marked object itself (its own
 * watch event, or a relist's), not of an object it owns or watches, a resync,
 * a requeue, a re-drive or an upgrade.
 */
export function isOwnChange(body: Uint8Array | undefined): boolean {
  if (body === undefined) return false;
  try {
    const mark = WorkMarkSchema.parse(JSON.parse(new TextDecoder().decode(body)));
    return (mark.reason === 'watch' || mark.reason === 'relist') && mark.cause === undefined;
  } catch {
    return false;
  }
}
