// The fence around a reconciler that may grant roles (rbac.bind) or write
// rules it does not hold (rbac.escalate). RBAC's resourceNames limits which
// role it grants, not to whom nor where: with `bind` on `admin` it could
// bind admin to its own ServiceAccount, or in kube-system (admin there runs
// pods as the controllers' accounts: cluster-admin). A
// ValidatingAdmissionPolicy for each, on the reconciler's requests only, refuses
//   - bindings whose subjects include a ServiceAccount of the operator's own
//     namespace or a `system:` user or group;
//   - ClusterRoleBindings to a ClusterRole it may bind without holding: `bind`
//     is for grants inside a namespace of its own, not cluster-wide (in every
//     namespace, kube-system included) unless declared `clusterWide`;
//   - Roles and RoleBindings outside the namespaces this operator made
//     (labelled managed-by=kubebus and controller=<operator>, as everything its
//     reconciler applies is — not another operator's), and in kube-system,
//     kube-public, kube-node-lease and the operator's namespace;
//   - putting those labels on a Namespace that lacked them (which would move
//     any namespace inside the fence).
// And for a reconciler that may change Namespaces, a policy that keeps it to
// the ones it made (never kube-system, default or its own namespace): RBAC
// cannot. For a reconciler that may write ClusterRoles (it owns them, or a
// declared rule lets it), whether or not it binds or escalates, a policy that
// refuses ClusterRoles carrying labels other than kubebus' and
// app.kubernetes.io's: an aggregating role (admin, edit, view: everyone bound
// to them) gathers the rules of every ClusterRole its selector matches, so a
// label would hand its rules — any, under `escalate` — to all of their holders.
import { MANAGED_BY, MANAGED_BY_LABEL } from '@kubebus/shared/kube';
import type { Operator } from '@kubebus/shared/definition';

const ADMISSION_API = 'admissionregistration.k8s.io/v1';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** The operator's name on everything its reconciler applies (the reconciler's CONTROLLER_LABEL). */
export const CONTROLLER_LABEL = 'kubebus.dev/controller';

/** Whether the operator's RBAC lets its reconciler grant what it does not hold. */
function grantsUnheld(operator: Operator): boolean {
  return (operator.rbac?.bind?.length ?? 0) > 0 || (operator.rbac?.escalate?.length ?? 0) > 0;
}

const WRITES = ['create', 'update', 'patch'];

/** Whether its reconciler may change `plural` of `group`: it owns them, or a declared rule lets it. */
function writes(operator: Operator, group: string, plural: string, verbs: readonly string[]) {
  const owned = (operator.owns ?? []).some(
    (resource) => resource.group === group && resource.plural === plural,
  );
  const declared = (operator.rbac?.rules ?? []).some(
    (rule) =>
      rule.apiGroups.includes(group) &&
      rule.resources.includes(plural) &&
      rule.verbs.some((verb) => verbs.includes(verb)),
  );
  return owned || declared;
}

/** Whether its reconciler may write ClusterRoles. */
export function writesClusterRoles(operator: Operator): boolean {
  return writes(operator, RBAC_GROUP, 'clusterroles', WRITES);
}

/** Whether its reconciler may change or delete Namespaces. */
export function writesNamespaces(operator: Operator): boolean {
  return writes(operator, '', 'namespaces', [...WRITES, 'delete']);
}

/** Whether the reconciler's RBAC ships with the policies below. */
export function needsAdmissionPolicy(operator: Operator): boolean {
  return grantsUnheld(operator) || writesClusterRoles(operator) || writesNamespaces(operator);
}

/** The label prefixes a ClusterRole the reconciler writes may carry: none an aggregation selects by. */
export const CLUSTER_ROLE_LABEL_PREFIXES = ['kubebus.dev/', 'app.kubernetes.io/'];

/** `labels` carries label=value (CEL; `labels` may be absent). */
const labelled = (metadata: string, label: string, value: string) =>
  `'${label}' in ${metadata}.labels && ${metadata}.labels['${label}'] == '${value}'`;

/** The object was made by this operator's reconciler: managed-by=kubebus, controller=<operator>. */
const ours = (metadata: string, operator: string) =>
  `(has(${metadata}.labels) && ${labelled(metadata, MANAGED_BY_LABEL, MANAGED_BY)} && ${labelled(metadata, CONTROLLER_LABEL, operator)})`;

const quoted = (names: readonly string[]) => names.map((name) => `'${name}'`).join(', ');

/** One policy per kind of check: the apiserver type-checks each against every kind it matches. */
function fences(namespace: string, operator: Operator) {
  return [
    ...(grantsUnheld(operator) ? grantFences(namespace, operator) : []),
    ...(writesClusterRoles(operator) ? [aggregationFence(operator)] : []),
    ...(writesNamespaces(operator) ? [namespacesFence(namespace, operator)] : []),
  ];
}

/** No ClusterRole it writes is gathered into another: labels of kubebus' and app.kubernetes.io's only. */
function aggregationFence(operator: Operator) {
  const prefixes = CLUSTER_ROLE_LABEL_PREFIXES.map((prefix) => `k.startsWith('${prefix}')`).join(
    ' || ',
  );
  return {
    check: 'aggregation',
    rule: {
      apiGroups: [RBAC_GROUP],
      apiVersions: ['*'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['clusterroles'],
    },
    expression: `!has(object.metadata.labels) || object.metadata.labels.all(k, ${prefixes})`,
    message: `the reconciler of ${operator.name} may label a ClusterRole only with ${CLUSTER_ROLE_LABEL_PREFIXES.map((p) => `${p}*`).join(' and ')}: another label could have an aggregating ClusterRole (admin, edit, view) gather its rules and grant them to everyone bound to it`,
  };
}

/** What keeps a reconciler that binds or escalates to whom and where it may grant. */
function grantFences(namespace: string, operator: Operator) {
  const name = operator.name;
  const fenced = quoted(['kube-system', 'kube-public', 'kube-node-lease', namespace]);
  // the ClusterRoles it may grant without holding their rules, and not cluster-wide
  const bound = (operator.rbac?.bind ?? [])
    .filter((role) => role.kind === 'ClusterRole' && role.clusterWide !== true)
    .map((role) => role.name);
  // a ServiceAccount subject without a namespace is one of the binding's namespace
  const accountNamespace = `(has(s.namespace) && s.namespace != '' ? s.namespace : request.namespace)`;
  const rbac = (resources: string[]) => ({
    apiGroups: [RBAC_GROUP],
    apiVersions: ['*'],
    operations: ['CREATE', 'UPDATE'],
    resources,
  });
  return [
    {
      check: 'subjects',
      rule: rbac(['rolebindings', 'clusterrolebindings']),
      expression: `!has(object.subjects) || object.subjects.all(s, !(s.kind == 'ServiceAccount' && ${accountNamespace} == '${namespace}') && !(s.kind in ['User', 'Group'] && s.name.startsWith('system:')))`,
      message: `the reconciler of ${name} may not grant a role to a ServiceAccount of ${namespace} or to a system: user or group`,
    },
    ...(bound.length === 0
      ? []
      : [
          {
            check: 'cluster-wide',
            rule: rbac(['clusterrolebindings']),
            expression: `!(object.roleRef.kind == 'ClusterRole' && object.roleRef.name in [${quoted(bound)}])`,
            message: `the reconciler of ${name} may grant ${bound.join(', ')} only inside a namespace (a RoleBinding), never cluster-wide`,
          },
        ]),
    {
      check: 'namespaces',
      rule: rbac(['roles', 'rolebindings']),
      expression: `!(request.namespace in [${fenced}]) && ${ours('namespaceObject.metadata', name)}`,
      message: `the reconciler of ${name} may write Roles and RoleBindings only in namespaces it made (labelled ${MANAGED_BY_LABEL}=${MANAGED_BY} and ${CONTROLLER_LABEL}=${name}), never in ${fenced.replaceAll("'", '')}`,
    },
    // one that may change Namespaces has the stricter fence below, which covers this
    ...(writesNamespaces(operator)
      ? []
      : [
          {
            check: 'labels',
            rule: {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['UPDATE'],
              resources: ['namespaces'],
            },
            expression: `${ours('oldObject.metadata', name)} || !${ours('object.metadata', name)}`,
            message: `the reconciler of ${name} may not label as its own (${MANAGED_BY_LABEL}=${MANAGED_BY}, ${CONTROLLER_LABEL}=${name}) a Namespace it did not create`,
          },
        ]),
  ];
}

/**
 * Namespaces it did not make are not its to change or delete: RBAC grants
 * update and delete on every Namespace (kube-system's Pod Security labels, the
 * operator's own namespace) to a reconciler that owns them.
 */
function namespacesFence(namespace: string, operator: Operator) {
  const name = operator.name;
  const fenced = quoted(['kube-system', 'kube-public', 'kube-node-lease', 'default', namespace]);
  return {
    check: 'own-namespaces',
    rule: {
      apiGroups: [''],
      apiVersions: ['v1'],
      operations: ['UPDATE', 'DELETE'],
      resources: ['namespaces'],
    },
    expression: `${ours('oldObject.metadata', name)} && !(oldObject.metadata.name in [${fenced}])`,
    message: `the reconciler of ${name} may change or delete only Namespaces it made (labelled ${MANAGED_BY_LABEL}=${MANAGED_BY} and ${CONTROLLER_LABEL}=${name}), never ${fenced.replaceAll("'", '')}`,
  };
}

/** The policies and their bindings, for the reconciler's ServiceAccount in `namespace`. */
export function admissionPolicyOf(operator: Operator, namespace: string): object[] {
  const account = `system:serviceaccount:${namespace}:kubebus-${operator.name}-reconciler`;
  const labels = {
    'app.kubernetes.io/name': 'kubebus',
    'app.kubernetes.io/instance': operator.name,
    'app.kubernetes.io/component': 'reconciler',
  };
  return fences(namespace, operator).flatMap(({ check, rule, expression, message }) => {
    const name = `kubebus-${operator.name}-reconciler-${check}`;
    return [
      {
        apiVersion: ADMISSION_API,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name, labels },
        spec: {
          // an apiserver that cannot evaluate the policy refuses: the fence never opens
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [rule] },
          matchConditions: [
            { name: 'by-the-reconciler', expression: `request.userInfo.username == '${account}'` },
          ],
          validations: [{ expression, message, reason: 'Forbidden' }],
        },
      },
      {
        apiVersion: ADMISSION_API,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name, labels },
        spec: { policyName: name, validationActions: ['Deny'] },
      },
    ];
  });
}
