// The RBAC of /metrics, as Kubebuilder scaffolds it for controller-runtime's
// secure metrics: each role's ServiceAccount may create TokenReviews and
// SubjectAccessReviews (to check who reads its /metrics), and the ClusterRole
// `kubebus-<op>-metrics-reader` grants reading — bind it to whoever scrapes
// (monitoring.ts binds the scraper's account). Both cluster-scoped: a
// TokenReview has no namespace, so a namespaced install needs them too.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { operatorLabels, roleObjectName } from './names.js';

const RBAC = 'rbac.authorization.k8s.io';

export const metricsReaderRoleName = (operator: Operator) =>
  `kubebus-${operator.name}-metrics-reader`;

const metricsAuthName = (operator: Operator) => `kubebus-${operator.name}-metrics-auth`;

export function metricsRbacOf(
  operator: Operator,
  namespace: string,
  roles: readonly Role[],
): object[] {
  const labels = { ...operatorLabels(operator), 'app.kubernetes.io/component': 'metrics' };
  return [
    {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: metricsAuthName(operator), labels },
      rules: [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        {
          apiGroups: ['authorization.k8s.io'],
          resources: ['subjectaccessreviews'],
          verbs: ['create'],
        },
      ],
    },
    {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: metricsAuthName(operator), labels },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: metricsAuthName(operator) },
      subjects: roles.map((role) => ({
        kind: 'ServiceAccount',
        name: roleObjectName(operator, role),
        namespace,
      })),
    },
    {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: metricsReaderRoleName(operator), labels },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    },
  ];
}
