// A Quota writes its cpu into a ConfigMap; this release cannot read a cpu
// like "lots" and throws, so such a Quota is dead-lettered
// (test/e2e/replay-parked.test.ts). quotas-fixed.ts is the fix.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

export const Quota = defineResource({
  group: 'quotas.test.kubebus.dev',
  version: 'v1',
  kind: 'Quota',
  scope: 'Namespaced',
  spec: z.object({ cpu: z.string().max(32) }),
  status: z.object({ cpu: z.string() }).partial(),
});

/** The cpu in millicores, as this release reads it: a number, with or without `m`. */
export function millicores(cpu: string): number {
  const match = /^(\d+)(m?)$/.exec(cpu);
  if (match === null) throw new Error(`cannot read cpu "${cpu}"`);
  return match[2] === 'm' ? Number(match[1]) : Number(match[1]) * 1000;
}

/** The operator of a release, by how it reads a cpu. */
export function quotasReading(read: (cpu: string) => number) {
  return defineOperator({
    name: 'quotas',
    for: Quota,
    owns: [kinds.ConfigMap],
    partitions: 2,
    async reconcile(quota, ctx) {
      const cpu = `${String(read(quota.spec.cpu))}m`;
      await ctx.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${quota.metadata.name}-quota` },
        data: { cpu },
      });
      return { status: { cpu } };
    },
  });
}

export default quotasReading(millicores);
