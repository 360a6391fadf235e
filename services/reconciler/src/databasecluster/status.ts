// The status a DatabaseCluster should show, from what was observed: phase,
// readyReplicas, endpoint, and the Ready / Progressing / Degraded conditions.
import type { KubeObject } from '@kubebus/shared/events';
import { setCondition, type Condition, type ConditionInput } from '@kubebus/shared/kube';

export interface ObservedStatus {
  phase?: string;
  readyReplicas?: number;
  endpoint?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

export function currentStatus(cluster: KubeObject): ObservedStatus {
  return cluster['status'] ?? {};
}

type ConditionFields = Omit<ConditionInput, 'observedGeneration'>;

/** The cluster's conditions with `updates` set, all at the cluster's generation. */
function withConditions(
  cluster: KubeObject,
  updates: readonly ConditionFields[],
  now: Date,
): Condition[] {
  const observedGeneration = cluster.metadata.generation ?? 0;
  return updates.reduce<Condition[]>(
    (conditions, update) => setCondition(conditions, { ...update, observedGeneration }, now),
    currentStatus(cluster).conditions ?? [],
  );
}

export function runningStatus(
  cluster: KubeObject,
  desiredReplicas: number,
  readyReplicas: number,
  endpoint: string,
  now = new Date(),
): ObservedStatus {
  const ready = readyReplicas >= desiredReplicas;
  const message = `${readyReplicas}/${desiredReplicas} replicas ready`;
  const conditions = withConditions(
    cluster,
    [
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        reason: ready ? 'AllReplicasReady' : 'WaitingForReplicas',
        message,
      },
      {
        type: 'Progressing',
        status: ready ? 'False' : 'True',
        reason: ready ? 'Stable' : 'Provisioning',
        message,
      },
      { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
    ],
    now,
  );
  return { phase: ready ? 'Ready' : 'Provisioning', readyReplicas, endpoint, conditions };
}

export function invalidSpecStatus(
  cluster: KubeObject,
  message: string,
  now = new Date(),
): ObservedStatus {
  const conditions = withConditions(
    cluster,
    [
      { type: 'Ready', status: 'False', reason: 'InvalidSpec', message },
      { type: 'Progressing', status: 'False', reason: 'InvalidSpec', message },
    ],
    now,
  );
  return { ...currentStatus(cluster), phase: 'Failed', conditions };
}

/** True when the status already reports this generation's spec as invalid (no second Event). */
export function alreadyInvalid(cluster: KubeObject): boolean {
  const ready = currentStatus(cluster).conditions?.find((c) => c.type === 'Ready');
  return (
    ready?.reason === 'InvalidSpec' && ready.observedGeneration === cluster.metadata.generation
  );
}
