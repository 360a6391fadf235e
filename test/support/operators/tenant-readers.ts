// A Tenant operator that writes a ClusterRole of its own, `tenant-reader`,
// with rules it does not hold (`escalate` on that name): the e2e test shows
// its fence keeps it from labelling the role into an aggregating one
// (`aggregate-to-view` would hand its rules to everyone bound to `view`).
import { defineOperator, kinds } from 'kubebus';
import { Tenant } from './tenant-admins.js';

/** The ClusterRole it writes, and may fill with any rules. */
export const READER_ROLE = 'tenant-reader';

export default defineOperator({
  name: 'tenant-readers',
  for: Tenant,
  owns: [kinds.ClusterRole],
  rbac: { escalate: [{ kind: 'ClusterRole', name: READER_ROLE }] },
  partitions: 1,
  async reconcile(tenant, ctx) {
    // what a tenant's readers may read, whatever the reconciler itself holds
    await ctx.apply(kinds.ClusterRole, {
      metadata: { name: READER_ROLE },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    });
    return { status: { namespace: `tenant-${tenant.metadata.name}` } };
  },
});
