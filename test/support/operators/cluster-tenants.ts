// A cluster-scoped owner with namespaced children (test/e2e/cluster-scoped.test.ts):
// a Tenant owns a Namespace (its own name, or the one its spec names) and a
// ConfigMap in it.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

export const Tenant = defineResource({
  group: 'tenancy.test.kubebus.dev',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({ cpu: z.string().default('2'), namespace: z.string().optional() }),
  status: z.object({ namespace: z.string() }).partial(),
});

const tenants = defineOperator({
  name: 'tenants',
  for: Tenant,
  owns: [kinds.Namespace, kinds.ConfigMap],
  partitions: 4,
  async reconcile(tenant, ctx) {
    const namespace = tenant.spec.namespace ?? `tenant-${tenant.metadata.name}`;
    await ctx.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await ctx.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'limits', namespace },
      data: { cpu: tenant.spec.cpu },
    });
    return { status: { namespace } };
  },
});

export default tenants;
