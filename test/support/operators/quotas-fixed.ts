// quotas.ts's fix: a cpu it cannot read is the default, 1000m, not a throw.
import { defineOperator, kinds } from 'kubebus';
import { millicores, Quota } from './quotas.js';

const readable = (cpu: string) => {
  try {
    return millicores(cpu);
  } catch {
    return 1000;
  }
};

const quotas = defineOperator({
  name: 'quotas',
  for: Quota,
  owns: [kinds.ConfigMap],
  partitions: 2,
  async reconcile(quota, ctx) {
    const cpu = `${String(readable(quota.spec.cpu))}m`;
    await ctx.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${quota.metadata.name}-quota` },
      data: { cpu },
    });
    return { status: { cpu } };
  },
});

export default quotas;
