// No kubelet runs in the loopback stack, so nothing would ever report pods
// ready. This stand-in plays that part for StatefulSets kubebus manages: it
// reports spec.replicas as ready, the way a healthy cluster eventually would.
import { KubeClient, ContentTypes } from '@kubebus/shared/kube';

interface StatefulSetList {
  items: {
    metadata: { name: string; namespace: string };
    spec?: { replicas?: number };
    status?: { readyReplicas?: number };
  }[];
}

export function startKubeletStandIn(client: KubeClient, everyMs = 1_000): () => void {
  let stopped = false;
  const tick = async () => {
    const list = await client.request<StatefulSetList>('/apis/apps/v1/statefulsets', {
      query: { labelSelector: 'app.kubernetes.io/managed-by=kubebus' },
    });
    for (const sts of list.items) {
      const replicas = sts.spec?.replicas ?? 1;
      if (sts.status?.readyReplicas === replicas) continue;
      await client.request(
        `/apis/apps/v1/namespaces/${sts.metadata.namespace}/statefulsets/${sts.metadata.name}/status`,
        {
          method: 'PATCH',
          contentType: ContentTypes.merge,
          body: { status: { replicas, readyReplicas: replicas, availableReplicas: replicas } },
        },
      );
    }
  };
  const loop = async () => {
    while (!stopped) {
      await tick().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };
  void loop();
  return () => {
    stopped = true;
  };
}
