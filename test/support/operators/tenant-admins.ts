// A cluster-scoped Tenant that owns a Namespace and, in it, a RoleBinding
// granting the bootstrap ClusterRole `admin` to the tenant's admins — the
// operator whose RBAC needs `bind` (it does not hold admin's rules itself).
// tenantAdmins(name, rbac) makes variants: the e2e test compares the RBAC
// generated with the declaration and without it.
import { defineOperator, defineResource, kinds, type OperatorRbac } from 'kubebus';
import { z } from 'zod';

export const Tenant = defineResource({
  group: 'tenancy.test.kubebus.dev',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({ admins: z.array(z.string().min(1)).min(1) }),
  status: z.object({ namespace: z.string() }).partial(),
});

/** What a tenant's admins are granted in their namespace. */
export const GRANTED_ROLE = 'admin';

/** The declaration that lets the reconciler grant `admin` without holding it. */
export const BIND_ADMIN: OperatorRbac = { bind: [{ kind: 'ClusterRole', name: GRANTED_ROLE }] };

export function tenantAdmins(name: string, rbac?: OperatorRbac) {
  return defineOperator({
    name,
    for: Tenant,
    owns: [kinds.Namespace, kinds.RoleBinding],
    ...(rbac === undefined ? {} : { rbac }),
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
}

export default tenantAdmins('tenant-admins', BIND_ADMIN);
