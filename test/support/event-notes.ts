// The Events about one object, as `kubectl events` shows them: `type note`,
// sorted. Events are sent in the background (ADR 0029): wait for them.
import { EventsV1Api, KubeConfig } from '@kubernetes/client-node';
import type { TestEnvironment } from 'kubebus/testing';

export async function eventNotes(
  env: TestEnvironment,
  name: string,
  reason: string,
  namespace = 'default',
): Promise<string[]> {
  const kc = new KubeConfig();
  kc.loadFromFile(env.kubeconfigPath);
  const { items } = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
  return items
    .filter((e) => e.reason === reason && e.regarding?.name === name)
    .map((e) => `${e.type ?? ''} ${e.note ?? ''}`)
    .sort();
}
