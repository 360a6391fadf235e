// Operators the generators' unit tests run on: one with setup (external
// state on the bus) and owned kinds, one without either; and a cluster-scoped
// resource, what may own cluster-scoped kinds.
import { z } from 'zod';
import { defineOperator, defineResource, kinds } from '@kubebus/shared/definition';

export const Site = defineResource({
  group: 'example.test',
  version: 'v1',
  kind: 'Site',
  scope: 'Namespaced',
  spec: z.object({ html: z.string() }),
  status: z.object({ url: z.string() }).partial(),
});

export const site = defineOperator({
  name: 'site',
  for: Site,
  owns: [kinds.ConfigMap, kinds.Deployment],
  setup: () => ({ bucket: 'b' }),
  async reconcile() {
    return undefined;
  },
});

export const plain = defineOperator({
  name: 'plain',
  for: Site,
  async reconcile() {
    return undefined;
  },
});

/** Cluster-scoped: what may own Namespaces and ClusterRoles. */
export const Tenant = defineResource({
  group: 'example.test',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({ admins: z.array(z.string()) }),
  status: z.object({ namespace: z.string() }).partial(),
});
