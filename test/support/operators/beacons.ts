// The overlap operators (beacon*.ts): a Beacon shows one colour, a ConfigMap
// named after it. When the colour changes, the old one must go. Whether the
// operator finds the old one by what it owns (the runtime's pruning) or by
// what its status says it showed last is the difference between the two.
// Remembering in the status is fragile where the next change lands while a
// reconcile runs: that reconcile's status is for a generation already
// replaced, and the status writer drops it, so a runtime that showed the next
// reconcile only the written status would make it forget the colour the
// paused one put up. kubebus shows it the status its pending intent makes,
// stale or not (ADR 0019).
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

export const Beacon = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Beacon',
  scope: 'Namespaced',
  spec: z.object({ colour: z.enum(['red', 'green', 'blue']) }),
  status: z.object({ shown: z.enum(['red', 'green', 'blue']) }).partial(),
});

type OldColour = 'pruned' | 'deleted-as-the-status-remembers';

export function beaconOperator(name: string, oldColour: OldColour) {
  return defineOperator({
    name,
    for: Beacon,
    owns: [kinds.ConfigMap],
    // the seeded bug removes the old colour itself, from its memory
    prune: oldColour === 'pruned',
    async reconcile(beacon, ctx: ReconcileContext) {
      const { name: object } = beacon.metadata;
      const { colour } = beacon.spec;
      const shown = beacon.status?.shown;
      if (
        oldColour === 'deleted-as-the-status-remembers' &&
        shown !== undefined &&
        shown !== colour
      )
        await ctx.delete(kinds.ConfigMap, `${object}-${shown}`);
      await ctx.apply(kinds.ConfigMap, {
        metadata: { name: `${object}-${colour}` },
        data: { colour },
      });
      return { status: { shown: colour }, ready: { status: true, reason: 'Shown' } };
    },
  });
}
