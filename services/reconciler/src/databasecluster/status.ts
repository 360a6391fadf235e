// The status a DatabaseCluster should show, from what was observed: phase,
// readyReplicas, endpoint, and the Ready / Progressing / Degraded conditions.
import type { KubeObject } from '@kubebus/shared/events';
import { setCondition, type Condition } from '@kubebus/shared/kube';

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

export function runningStatus(
  cluster: KubeObject,
  desiredReplicas: number,
  readyReplicas: number,
  endpoint: string,
  now = new Date(),
): ObservedStatus {
  const generation = cluster.metadata.generation ?? 0;
  const ready = readyReplicas >= desiredReplicas;
  const progress = `${readyReplicas}/${desiredReplicas} replicas ready`;
  let conditions = currentStatus(cluster).conditions;
  conditions = setCondition(
    conditions,
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'AllReplicasReady' : 'WaitingForReplicas',
      message: progress,
      observedGeneration: generation,
    },
    now,
  );
  conditions = setCondition(
    conditions,
    {
      type: 'Progressing',
      status: ready ? 'False' : 'True',
      reason: ready ? 'Stable' : 'Provisioning',
      message: progress,
      observedGeneration: generation,
    },
    now,
  );
  conditions = setCondition(
    conditions,
    {
      type: 'Degraded',
      status: 'False',
      reason: 'AsExpected',
      message: '',
      observedGeneration: generation,
    },
    now,
  );
  return { phase: ready ? 'Ready' : 'Provisioning', readyReplicas, endpoint, conditions };
}

export function invalidSpecStatus(
  cluster: KubeObject,
  message: string,
  now = new Date(),
): ObservedStatus {
  const generation = cluster.metadata.generation ?? 0;
  const current = currentStatus(cluster);
  let conditions = setCondition(
    current.conditions,
    {
      type: 'Ready',
      status: 'False',
      reason: 'InvalidSpec',
      message,
      observedGeneration: generation,
    },
    now,
  );
  conditions = setCondition(
    conditions,
    {
      type: 'Progressing',
      status: 'False',
      reason: 'InvalidSpec',
      message,
      observedGeneration: generation,
    },
    now,
  );
  return { ...current, phase: 'Failed', conditions };
}

/** True when the status already reports this generation's spec as invalid (no second Event). */
export function alreadyInvalid(cluster: KubeObject): boolean {
  const ready = currentStatus(cluster).conditions?.find((c) => c.type === 'Ready');
  return (
    ready?.reason === 'InvalidSpec' && ready.observedGeneration === cluster.metadata.generation
  );
}
