// Kubernetes helpers for tests, through @kubernetes/client-node (not the code
// under test).
import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { waitFor } from './wait.js';

export async function installCrd(kc: KubeConfig, crd: V1CustomResourceDefinition): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  await api.createCustomResourceDefinition({ body: crd });
  const name = crd.metadata?.name ?? '';
  await waitFor(async () => {
    const current = await api.readCustomResourceDefinition({ name });
    return (current.status?.conditions ?? []).some(
      (c) => c.type === 'Established' && c.status === 'True',
    );
  }, `CRD ${name} to be Established`);
}

export const TEST_GROUP = 'test.kubebus.dev';

/** A namespaced test kind with a status subresource and a free-form spec. */
export const widgetCrd: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${TEST_GROUP}` },
  spec: {
    group: TEST_GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
              status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
            },
          },
        },
      },
    ],
  },
};

export function widget(
  name: string,
  spec: Record<string, unknown>,
  namespace = 'default',
): KubernetesObject & { spec: unknown } {
  return { apiVersion: `${TEST_GROUP}/v1`, kind: 'Widget', metadata: { name, namespace }, spec };
}

export function objects(kc: KubeConfig): KubernetesObjectApi {
  return KubernetesObjectApi.makeApiClient(kc);
}
