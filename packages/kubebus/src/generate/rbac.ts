// Least-privilege RBAC per role, from what the definition declares: each
// role gets exactly the verbs its code sends for each resource, nothing else.
//   watcher       list + watch everything declared (for, owns, watches)
//   reconciler    get what it may read by reference (objects too large for
//                 the bus) — never Secrets: the bus carries them without
//                 their data, and only a rule the operator declares for
//                 ctx.readSecret may read it; patch the
//                 primary (its finalizer: set with `finalize`, taken off a
//                 deleted object by a version without it); create + patch
//                 what it owns (server-side apply that creates needs both),
//                 update the primary's finalizers (blockOwnerDeletion);
//                 create Events
//   status-writer get + patch the primary's /status
// and the reconciler what the definition's `rbac` declares: `bind` and
// `escalate` on exactly the roles it names, its extra rules as written —
// fenced by an admission policy (admission-policy.ts) that keeps it from
// granting them to itself or outside the namespaces kubebus manages. The
// policy ships with the RBAC, never apart: whoever applies one applies both.
import {
  declaredResources,
  kinds,
  type Operator,
  type OperatorRbac,
  type Resource,
  type RoleReference,
} from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { admissionPolicyOf, needsAdmissionPolicy } from './admission-policy.js';
import { CLUSTER_SCOPED_BUILT_INS } from './cluster-scoped.js';
import { metricsRbacOf } from './metrics-rbac.js';

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function rule(resource: Resource, verbs: string[], subresource?: string): PolicyRule {
  return {
    apiGroups: [resource.group],
    resources: [subresource === undefined ? resource.plural : `${resource.plural}/${subresource}`],
    verbs,
  };
}

/** What RBAC names a resource by: `owns` and `watches` may spell one resource as two values. */
const grantedName = (resource: Resource) => `${resource.group}/${resource.plural}`;

const isSecrets = (resource: Resource) => resource.group === '' && resource.plural === 'secrets';

/** `verb` on the named roles: one rule per kind, its resourceNames exactly those roles. */
function onRoles(verb: 'bind' | 'escalate', references: readonly RoleReference[]): PolicyRule[] {
  return (['ClusterRole', 'Role'] as const).flatMap((kind) => {
    const names = [...new Set(references.filter((r) => r.kind === kind).map((r) => r.name))].sort();
    if (names.length === 0) return [];
    return [
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: [kind === 'ClusterRole' ? 'clusterroles' : 'roles'],
        verbs: [verb],
        resourceNames: names,
      },
    ];
  });
}

function declaredRules(rbac: OperatorRbac): PolicyRule[] {
  return [
    ...onRoles('bind', rbac.bind ?? []),
    ...onRoles('escalate', rbac.escalate ?? []),
    ...(rbac.rules ?? []).map((declared) => ({
      apiGroups: [...declared.apiGroups],
      resources: [...declared.resources],
      verbs: [...declared.verbs],
      ...(declared.resourceNames === undefined
        ? {}
        : { resourceNames: [...declared.resourceNames] }),
    })),
  ];
}

export function rulesOf(operator: Operator, role: Role): PolicyRule[] {
  const declared = declaredResources(operator);
  switch (role) {
    case 'watcher':
      return declared.map((resource) => rule(resource, ['list', 'watch']));
    case 'reconciler': {
      const owned = new Set((operator.owns ?? []).map(grantedName));
      const primary = grantedName(operator.for);
      return [
        ...declared
          .map((resource) => {
            const verbs = isSecrets(resource) ? [] : ['get'];
            // delete: ctx.delete and pruning (owned objects the last reconcile no longer applied)
            if (owned.has(grantedName(resource))) verbs.push('create', 'patch', 'delete');
            if (grantedName(resource) === primary)
              // patch: its finalizer, set with `finalize`, and taken off a deleted object
              // by a version without `finalize` (an earlier version set it); list: the
              // upgrade sweep lists the primary (metadata only) to reconcile every object again
              verbs.push(...(owned.has(primary) ? [] : ['patch']), 'list');
            return rule(resource, verbs);
          })
          .filter((granted) => granted.verbs.length > 0),
        // the owner references it sets block their owner's deletion: with
        // OwnerReferencesPermissionEnforcement (OpenShift) that takes update on its finalizers
        ...(owned.size > 0 ? [rule(operator.for, ['update'], 'finalizers')] : []),
        { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
        ...declaredRules(operator.rbac ?? {}),
      ];
    }
    case 'status-writer':
      return [rule(operator.for, ['get']), rule(operator.for, ['get', 'patch'], 'status')];
  }
}

/** The cluster-scoped resources the operator may name: those it declares, and the built-in ones. */
function clusterScopedOf(operator: Operator): Set<string> {
  const known = [...declaredResources(operator), ...Object.values(kinds)];
  return new Set([
    ...known.filter((resource) => resource.scope === 'Cluster').map(grantedName),
    ...CLUSTER_SCOPED_BUILT_INS,
  ]);
}

/** `bind` and `escalate` on a ClusterRole are checked where the binding is: a Role grants them there. */
const grantsRoles = (granted: PolicyRule) =>
  granted.verbs.every((verb) => verb === 'bind' || verb === 'escalate');

/**
 * The rules split by the scope of what they grant: a rule's resource (or its
 * subresource) is cluster-scoped when it is in every group the rule names;
 * `bind` and `escalate` stay with the namespaces.
 */
function byScope(
  rules: readonly PolicyRule[],
  clusterScoped: ReadonlySet<string>,
): { cluster: PolicyRule[]; namespaced: PolicyRule[] } {
  const cluster: PolicyRule[] = [];
  const namespaced: PolicyRule[] = [];
  for (const granted of rules) {
    if (grantsRoles(granted)) {
      namespaced.push(granted);
      continue;
    }
    const inCluster = (resource: string) =>
      granted.apiGroups.every((group) =>
        clusterScoped.has(`${group}/${resource.split('/')[0] ?? ''}`),
      );
    const part = (resources: string[]) => ({ ...granted, resources });
    const clusterResources = granted.resources.filter(inCluster);
    const namespacedResources = granted.resources.filter((resource) => !inCluster(resource));
    if (clusterResources.length > 0) cluster.push(part(clusterResources));
    if (namespacedResources.length > 0) namespaced.push(part(namespacedResources));
  }
  return { cluster, namespaced };
}

/**
 * ServiceAccount, and for each role a ClusterRole with its binding — or, when
 * the operator watches only some namespaces (KUBEBUS_WATCH_NAMESPACES), a
 * Role and RoleBinding in each of them: nothing outside them is readable. A
 * Role cannot grant a cluster-scoped resource (a Namespace it watches, say),
 * which the watcher watches cluster-wide whatever the namespaces: those rules
 * stay in a ClusterRole.
 * Then what /metrics needs (metrics-rbac.ts), and the reconciler's admission
 * policies, when it may bind, escalate or write ClusterRoles.
 */
export function rbacOf(
  operator: Operator,
  namespace: string,
  roles: readonly Role[],
  watchNamespaces: readonly string[] = [],
): object[] {
  const fence =
    roles.includes('reconciler') && needsAdmissionPolicy(operator)
      ? admissionPolicyOf(operator, namespace)
      : [];
  return [
    ...roles.flatMap((role) => rbacOfRole(operator, namespace, role, watchNamespaces)),
    ...(roles.length === 0 ? [] : metricsRbacOf(operator, namespace, roles)),
    ...fence,
  ];
}

function rbacOfRole(
  operator: Operator,
  namespace: string,
  role: Role,
  watchNamespaces: readonly string[],
): object[] {
  const name = `kubebus-${operator.name}-${role}`;
  const labels = {
    'app.kubernetes.io/name': 'kubebus',
    'app.kubernetes.io/instance': operator.name,
    'app.kubernetes.io/component': role,
  };
  const account = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace, labels },
  };
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  const clusterRole = (rules: PolicyRule[]) => [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    },
  ];
  const rules = rulesOf(operator, role);
  if (watchNamespaces.length === 0) return [account, ...clusterRole(rules)];
  const { cluster, namespaced } = byScope(rules, clusterScopedOf(operator));
  return [
    account,
    ...(cluster.length === 0 ? [] : clusterRole(cluster)),
    ...watchNamespaces.flatMap((watched) => [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace: watched, labels },
        rules: namespaced,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace: watched, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects,
      },
    ]),
  ];
}
