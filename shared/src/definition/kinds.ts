// Built-in kinds an operator owns or watches, typed by the Kubernetes API's
// own models (@kubernetes/client-node's, type-only, in their JSON form): a
// misspelt field of `ctx.apply(kinds.Deployment, {...})` does not compile,
// and what `ctx.get` and `ctx.apply` answer is typed down to the status.
// The core group is `group: ''` (apiVersion "v1"). Others: resource({...}).
import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1CronJob,
  V1DaemonSet,
  V1Deployment,
  V1Ingress,
  V1Job,
  V1LimitRange,
  V1Namespace,
  V1NetworkPolicy,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1ResourceQuota,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import type { Json } from './json.js';
import type { DesiredMeta, ResourceObject } from './objects.js';
import { resource, type Resource, type Scope } from './resource.js';

type Envelope = 'apiVersion' | 'kind' | 'metadata';

/** An object of a built-in kind as recorded: kubebus' metadata, the model's other fields. */
export type BuiltInObject<Model> = ResourceObject & Json<Omit<Model, Envelope>>;

/** What `ctx.apply(kind, body)` takes for a built-in kind: the model without apiVersion, kind and status. */
export type BuiltInBody<Model> = Json<Omit<Model, Envelope | 'status'>> & {
  readonly metadata: DesiredMeta;
};

export type BuiltIn<Model> = Resource<BuiltInObject<Model>, BuiltInBody<Model>>;

function builtIn<Model>(
  group: string,
  version: string,
  kind: string,
  plural: string,
  scope: Scope = 'Namespaced',
): BuiltIn<Model> {
  return resource<BuiltInObject<Model>, BuiltInBody<Model>>({
    group,
    version,
    kind,
    plural,
    scope,
  });
}

// core (group '')
export const ConfigMap = builtIn<V1ConfigMap>('', 'v1', 'ConfigMap', 'configmaps');
/**
 * Recorded as metadata only: its data never reaches the bus, and neither
 * `ctx.get` nor `ctx.apply` answers it (apply and createOnce send it).
 */
export const Secret = resource<
  BuiltInObject<Omit<V1Secret, 'data' | 'stringData'>>,
  BuiltInBody<V1Secret>
>({ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', scope: 'Namespaced' });
export const Service = builtIn<V1Service>('', 'v1', 'Service', 'services');
export const ServiceAccount = builtIn<V1ServiceAccount>(
  '',
  'v1',
  'ServiceAccount',
  'serviceaccounts',
);
export const PersistentVolumeClaim = builtIn<V1PersistentVolumeClaim>(
  '',
  'v1',
  'PersistentVolumeClaim',
  'persistentvolumeclaims',
);
export const Pod = builtIn<V1Pod>('', 'v1', 'Pod', 'pods');
export const Namespace = builtIn<V1Namespace>('', 'v1', 'Namespace', 'namespaces', 'Cluster');
export const ResourceQuota = builtIn<V1ResourceQuota>('', 'v1', 'ResourceQuota', 'resourcequotas');
export const LimitRange = builtIn<V1LimitRange>('', 'v1', 'LimitRange', 'limitranges');

// apps, batch
export const Deployment = builtIn<V1Deployment>('apps', 'v1', 'Deployment', 'deployments');
export const StatefulSet = builtIn<V1StatefulSet>('apps', 'v1', 'StatefulSet', 'statefulsets');
export const DaemonSet = builtIn<V1DaemonSet>('apps', 'v1', 'DaemonSet', 'daemonsets');
export const Job = builtIn<V1Job>('batch', 'v1', 'Job', 'jobs');
export const CronJob = builtIn<V1CronJob>('batch', 'v1', 'CronJob', 'cronjobs');

// networking, policy, autoscaling
export const Ingress = builtIn<V1Ingress>('networking.k8s.io', 'v1', 'Ingress', 'ingresses');
export const NetworkPolicy = builtIn<V1NetworkPolicy>(
  'networking.k8s.io',
  'v1',
  'NetworkPolicy',
  'networkpolicies',
);
export const PodDisruptionBudget = builtIn<V1PodDisruptionBudget>(
  'policy',
  'v1',
  'PodDisruptionBudget',
  'poddisruptionbudgets',
);
export const HorizontalPodAutoscaler = builtIn<V2HorizontalPodAutoscaler>(
  'autoscaling',
  'v2',
  'HorizontalPodAutoscaler',
  'horizontalpodautoscalers',
);

// RBAC (a binding to a role needs `bind` on it, or holding all its rules)
const rbac = 'rbac.authorization.k8s.io';
export const Role = builtIn<V1Role>(rbac, 'v1', 'Role', 'roles');
export const RoleBinding = builtIn<V1RoleBinding>(rbac, 'v1', 'RoleBinding', 'rolebindings');
export const ClusterRole = builtIn<V1ClusterRole>(
  rbac,
  'v1',
  'ClusterRole',
  'clusterroles',
  'Cluster',
);
export const ClusterRoleBinding = builtIn<V1ClusterRoleBinding>(
  rbac,
  'v1',
  'ClusterRoleBinding',
  'clusterrolebindings',
  'Cluster',
);
