// The crash-loop test's operator: a Fragile whose reconcile kills its own
// process (as the OOM killer or a segfaulting native call would) when its spec
// says so, and otherwise only reports the generation it saw. One partition:
// every object shares the consumer with the one that kills.
import { defineOperator, defineResource } from 'kubebus';
import { z } from 'zod';

export const Fragile = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Fragile',
  scope: 'Namespaced',
  spec: z.object({ crash: z.boolean().default(false) }),
  status: z.object({ seen: z.int() }).partial(),
});

export default defineOperator({
  name: 'fragiles',
  for: Fragile,
  partitions: 1,
  // parked after two deaths blamed on it (the default is 5): the test is quicker
  maxCrashes: 2,
  reconcile: async (fragile) => {
    if (fragile.spec.crash) process.kill(process.pid, 'SIGKILL');
    return {
      status: { seen: fragile.metadata.generation ?? 0 },
      ready: { status: true, reason: 'Seen' },
    };
  },
});
