// No kubelet runs on the loopback servers, so no pod ever becomes ready. This
// stand-in plays that part: every Deployment and StatefulSet is reported with
// its spec.replicas ready and its generation observed, as a healthy cluster
// eventually would (what kstatus and most operators read as "rolled out").
import { ContentTypes, isNotFound, type KubeClient } from '@kubebus/shared/kube';

interface Workload {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly generation?: number;
  };
  readonly spec?: { readonly replicas?: number };
  readonly status?: { readonly readyReplicas?: number; readonly observedGeneration?: number };
}

const WORKLOADS = ['deployments', 'statefulsets'] as const;

function readyStatus(plural: (typeof WORKLOADS)[number], workload: Workload): object {
  const replicas = workload.spec?.replicas ?? 1;
  const counts = {
    observedGeneration: workload.metadata.generation ?? 1,
    replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    updatedReplicas: replicas,
  };
  if (plural === 'statefulsets') {
    // one revision, rolled out: what the StatefulSet controller reports once every pod is current
    const revision = `${workload.metadata.name}-stand-in`;
    return {
      ...counts,
      currentReplicas: replicas,
      currentRevision: revision,
      updateRevision: revision,
    };
  }
  const now = new Date().toISOString();
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    lastUpdateTime: now,
    lastTransitionTime: now,
  });
  return {
    ...counts,
    conditions: [
      condition('Available', 'MinimumReplicasAvailable'),
      condition('Progressing', 'NewReplicaSetAvailable'),
    ],
  };
}

/** One pass: every workload not yet reported ready at its generation is. */
export async function markWorkloadsReady(client: KubeClient): Promise<void> {
  for (const plural of WORKLOADS) {
    const list = await client.request<{ items: readonly Workload[] }>(`/apis/apps/v1/${plural}`);
    for (const workload of list.items) {
      const { namespace, name, generation = 1 } = workload.metadata;
      if (
        workload.status?.readyReplicas === (workload.spec?.replicas ?? 1) &&
        workload.status.observedGeneration === generation
      )
        continue;
      try {
        await client.request(`/apis/apps/v1/namespaces/${namespace}/${plural}/${name}/status`, {
          method: 'PATCH',
          contentType: ContentTypes.merge,
          body: { status: readyStatus(plural, workload) },
        });
      } catch (error) {
        // deleted since the list: nothing left to report
        if (!isNotFound(error)) throw error;
      }
    }
  }
}

export interface WorkloadStandIn {
  /** a pass now: resolves once every workload that exists is reported ready */
  pass(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The stand-in kept running, as kubelets keep running: a pass now, then one
 * `intervalMs` after each ends, so workloads made or scaled later become
 * ready too. A background pass that fails is tried again by the next; a
 * pass a caller waits for throws its own failure.
 */
export function startWorkloadStandIn(client: KubeClient, intervalMs = 500): WorkloadStandIn {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // one pass at a time: each waits for the one before, whatever it came to
  let current: Promise<void> = Promise.resolve();
  const pass = (): Promise<void> => {
    current = current
      .catch(() => undefined)
      .then(() => (stopped ? undefined : markWorkloadsReady(client)));
    return current;
  };
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void pass()
        .catch(() => undefined)
        .finally(next);
    }, intervalMs);
    timer.unref();
  };
  next();
  return {
    pass,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current.catch(() => undefined);
    },
  };
}
