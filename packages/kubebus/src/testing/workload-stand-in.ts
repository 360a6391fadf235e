// No kubelet runs on the loopback servers, so no pod ever becomes ready. This
// stand-in plays that part: every Deployment and StatefulSet is reported with
// its spec.replicas ready, as a healthy cluster eventually would.
import { ContentTypes, type KubeClient } from '@kubebus/shared/kube';

interface WorkloadList {
  readonly items: readonly {
    readonly metadata: { readonly name: string; readonly namespace: string };
    readonly spec?: { readonly replicas?: number };
    readonly status?: { readonly readyReplicas?: number };
  }[];
}

export async function markWorkloadsReady(client: KubeClient): Promise<void> {
  for (const plural of ['deployments', 'statefulsets']) {
    const list = await client.request<WorkloadList>(`/apis/apps/v1/${plural}`);
    for (const workload of list.items) {
      const replicas = workload.spec?.replicas ?? 1;
      if (workload.status?.readyReplicas === replicas) continue;
      const { namespace, name } = workload.metadata;
      await client.request(`/apis/apps/v1/namespaces/${namespace}/${plural}/${name}/status`, {
        method: 'PATCH',
        contentType: ContentTypes.merge,
        body: {
          status: {
            replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
            updatedReplicas: replicas,
          },
        },
      });
    }
  }
}
