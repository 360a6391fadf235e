// What the object shows once its retry budget is spent: its current status
// with Degraded=True and the error, so a person sees it without reading logs.
import type { StatusPublisher } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import { setCondition, type Condition } from '@kubebus/shared/kube';
import type { ObjectKey } from '@kubebus/shared/runtime';

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
  const conditions = setCondition(current.conditions, {
    type: 'Degraded',
    status: 'True',
    reason: 'ReconcileFailed',
    message: reason.slice(0, 2_000),
    observedGeneration: object.metadata.generation ?? 0,
  });
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
