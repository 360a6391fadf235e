// Built-in kinds an operator commonly owns, typed for the fields a
// reconciler reads back (replicas, readiness). Others: resource({...}).
import type { ResourceObject } from './objects.js';
import { resource } from './resource.js';

interface Replicated extends ResourceObject {
  readonly spec?: { readonly replicas?: number };
  readonly status?: {
    readonly replicas?: number;
    readonly readyReplicas?: number;
    readonly availableReplicas?: number;
    readonly updatedReplicas?: number;
  };
}

interface WithData extends ResourceObject {
  readonly data?: Readonly<Record<string, string>>;
}

export const ConfigMap = resource<WithData>({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  scope: 'Namespaced',
});
/** watched as metadata only: its data (and type) never reach kubebus; read its metadata */
export const Secret = resource({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  scope: 'Namespaced',
});
export const Service = resource({
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  scope: 'Namespaced',
});
export const ServiceAccount = resource({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  scope: 'Namespaced',
});
export const PersistentVolumeClaim = resource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  scope: 'Namespaced',
});
export const Pod = resource({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  scope: 'Namespaced',
});
export const Namespace = resource({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  scope: 'Cluster',
});
export const Deployment = resource<Replicated>({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  scope: 'Namespaced',
});
export const StatefulSet = resource<Replicated>({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  scope: 'Namespaced',
});
export const Job = resource({
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  plural: 'jobs',
  scope: 'Namespaced',
});
export const CronJob = resource({
  group: 'batch',
  version: 'v1',
  kind: 'CronJob',
  plural: 'cronjobs',
  scope: 'Namespaced',
});
export const Ingress = resource({
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'Ingress',
  plural: 'ingresses',
  scope: 'Namespaced',
});
