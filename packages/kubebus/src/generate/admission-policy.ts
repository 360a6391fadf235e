// The fence around a reconciler that may grant roles (rbac.bind) or write
// rules it does not hold (rbac.escalate). RBAC's resourceNames limits which
// role it grants, not to whom nor where: with `bind` on `admin` it could
// bind admin to its own ServiceAccount, or in kube-system (admin there runs
// pods as the controllers' accounts: cluster-admin). A
// ValidatingAdmissionPolicy for each, on the reconciler's requests only, refuses
//   - bindings whose subjects include a ServiceAccount of the operator's own
//     namespace or a `system:` user or group;
//   - Roles and RoleBindings outside the namespaces kubebus manages (labelled
//     managed-by=kubebus, as everything the reconciler applies is), and in
//     kube-system, kube-public, kube-node-lease and the operator's namespace;
//   - putting the managed-by label on a Namespace that lacked it (which would
//     move any namespace inside the fence).
import { MANAGED_BY, MANAGED_BY_LABEL } from '@kubebus/shared/kube';
import type { Operator } from '@kubebus/shared/definition';

const ADMISSION_API = 'admissionregistration.k8s.io/v1';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Whether the operator's RBAC lets its reconciler grant what it does not hold. */
export function needsAdmissionPolicy(operator: Operator): boolean {
  return (operator.rbac?.bind?.length ?? 0) > 0 || (operator.rbac?.escalate?.length ?? 0) > 0;
}

/** `labels` carries managed-by=kubebus (CEL; `labels` may be absent). */
const managed = (metadata: string) =>
  `has(${metadata}.labels) && '${MANAGED_BY_LABEL}' in ${metadata}.labels && ${metadata}.labels['${MANAGED_BY_LABEL}'] == '${MANAGED_BY}'`;

/** One policy per kind of check: the apiserver type-checks each against every kind it matches. */
function fences(namespace: string, operator: string) {
  const fenced = ['kube-system', 'kube-public', 'kube-node-lease', namespace]
    .map((name) => `'${name}'`)
    .join(', ');
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
      message: `the reconciler of ${operator} may not grant a role to a ServiceAccount of ${namespace} or to a system: user or group`,
    },
    {
      check: 'namespaces',
      rule: rbac(['roles', 'rolebindings']),
      expression: `!(request.namespace in [${fenced}]) && ${managed('namespaceObject.metadata')}`,
      message: `the reconciler of ${operator} may write Roles and RoleBindings only in namespaces labelled ${MANAGED_BY_LABEL}=${MANAGED_BY}, never in ${fenced.replaceAll("'", '')}`,
    },
    {
      check: 'labels',
      rule: {
        apiGroups: [''],
        apiVersions: ['v1'],
        operations: ['UPDATE'],
        resources: ['namespaces'],
      },
      expression: `(${managed('oldObject.metadata')}) || !(${managed('object.metadata')})`,
      message: `the reconciler of ${operator} may not label a Namespace ${MANAGED_BY_LABEL}=${MANAGED_BY} that kubebus did not create`,
    },
  ];
}

/** The policies and their bindings, for the reconciler's ServiceAccount in `namespace`. */
export function admissionPolicyOf(operator: Operator, namespace: string): object[] {
  const account = `system:serviceaccount:${namespace}:kubebus-${operator.name}-reconciler`;
  const labels = {
    'app.kubernetes.io/name': 'kubebus',
    'app.kubernetes.io/instance': operator.name,
    'app.kubernetes.io/component': 'reconciler',
  };
  return fences(namespace, operator.name).flatMap(({ check, rule, expression, message }) => {
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
