// What the versioned test operator (operators/versioned.ts) leaves behind: each
// reconcile of a Widget applies `<widget>-state`, labelled with the release
// that reconciled it. Read back: widget name → release.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

export async function reconciledBy(
  kc: KubeConfig,
  namespace: string,
): Promise<Map<string, string>> {
  const list = await kc
    .makeApiClient(CoreV1Api)
    .listNamespacedConfigMap({ namespace, labelSelector: 'reconciled-by' });
  return new Map(
    list.items.map((cm) => [
      (cm.metadata?.name ?? '').replace(/-state$/, ''),
      cm.metadata?.labels?.['reconciled-by'] ?? '',
    ]),
  );
}
