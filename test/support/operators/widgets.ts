// The test kind of the watcher and CLI tests as an operator: Widgets in the
// test group, owning ConfigMaps and Secrets, reconciled by doing nothing. The
// tests start its roles with `kubebus run`, as users start theirs.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

export const Widget = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Widget',
  scope: 'Namespaced',
  spec: z.looseObject({}),
  status: z.looseObject({}),
});

export default defineOperator({
  name: 'widgets',
  for: Widget,
  owns: [kinds.ConfigMap, kinds.Secret],
  partitions: 4,
  reconcile: async () => undefined,
});
