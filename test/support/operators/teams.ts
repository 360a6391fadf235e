// The cluster-scoped resource of the perturbation tests (teams*.ts): a Team
// owns a Namespace and, in it, a quota page and a checkpoint ConfigMap
// recording which generation it finished — children in a namespace that is
// not the Team's (it has none), found through their controller reference.
// Which of page and checkpoint it writes first is the whole difference
// between the correct operator and the seeded bug.
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';
import { checkpointed, writeInOrder, type Order } from './checkpoint-order.js';

export const Team = defineResource({
  group: 'teams.test.kubebus.dev',
  version: 'v1',
  kind: 'Team',
  scope: 'Cluster',
  spec: z.object({
    cpu: z.int().min(1).max(8),
    tier: z.enum(['bronze', 'gold']).optional(),
  }),
  status: z.object({ namespace: z.string() }).partial(),
});

export function teamsOperator(name: string, order: Order) {
  return defineOperator({
    name,
    for: Team,
    owns: [kinds.Namespace, kinds.ConfigMap],
    // the checkpoint lets a reconcile skip the page: it must not be pruned then
    prune: false,
    async reconcile(team, ctx: ReconcileContext) {
      const namespace = `team-${team.metadata.name}`;
      const generation = String(team.metadata.generation ?? 0);
      const cpu = String(team.spec.cpu * (team.spec.tier === 'gold' ? 2 : 1));
      await ctx.apply(kinds.Namespace, { metadata: { name: namespace } });
      const writePage = () =>
        ctx.apply(kinds.ConfigMap, { metadata: { name: 'quota', namespace }, data: { cpu } });
      const writeCheckpoint = () =>
        ctx.apply(kinds.ConfigMap, {
          metadata: { name: 'checkpoint', namespace },
          data: { generation },
        });
      const checkpoint = await ctx.get(kinds.ConfigMap, 'checkpoint', namespace);
      if (!checkpointed(checkpoint, team)) await writeInOrder(order, writePage, writeCheckpoint);
      return { status: { namespace }, ready: { status: true, reason: 'Provisioned' } };
    },
  });
}

export default teamsOperator('teams', 'page-then-checkpoint');
