// The Tenant operator that also owns ClusterRoleBindings (to grant, cluster-wide,
// a ClusterRole whose rules it holds, say) and declares `bind` on admin for its
// tenants' namespaces: the e2e test shows its fence keeps it from granting admin
// cluster-wide, which RBAC alone allows.
import { defineOperator, kinds } from 'kubebus';
import { BIND_ADMIN, GRANTED_ROLE, Tenant } from './tenant-admins.js';

export default defineOperator({
  name: 'tenant-admins-cluster-wide',
  for: Tenant,
  owns: [kinds.Namespace, kinds.RoleBinding, kinds.ClusterRoleBinding],
  rbac: BIND_ADMIN,
  partitions: 2,
  async reconcile(tenant, ctx) {
    const namespace = `tenant-${tenant.metadata.name}`;
    await ctx.apply(kinds.Namespace, { metadata: { name: namespace } });
    await ctx.apply(kinds.RoleBinding, {
      metadata: { name: 'tenant-admins', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: GRANTED_ROLE },
      subjects: tenant.spec.admins.map((user) => ({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'User',
        name: user,
      })),
    });
    return { status: { namespace } };
  },
});
