// The scale-down operators (ensemble*.ts): an Ensemble of members, each with
// a Secret of its own (its identity, generated once). The Secrets are kept
// from the runtime's pruning: a member's identity goes only when a scale-down
// removes the member on purpose, so which members a reconcile removes is the
// operator's own decision. Seen one change at a time (2 → 3 → 2 → 1) the
// member past the new size is the only one that left; two scale-downs seen as
// one (3 → 1, the middle step coalesced while the operator was down) leave
// two. Whether the operator removes the one or every member past the size is
// the whole difference between the seeded bug and its twin.
import { randomBytes } from 'node:crypto';
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

/** The most members an ensemble may have. */
export const MAX_MEMBERS = 5;

export const Ensemble = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Ensemble',
  scope: 'Namespaced',
  spec: z.object({ replicas: z.int().min(1).max(MAX_MEMBERS) }),
  status: z.object({ members: z.int() }).partial(),
});

type ScaleDown = 'removes-the-member-that-left' | 'removes-every-member-past-the-size';

const memberOf = (ensemble: string, index: number) => `${ensemble}-member-${index}`;

export function ensembleOperator(name: string, scaleDown: ScaleDown) {
  return defineOperator({
    name,
    for: Ensemble,
    owns: [kinds.Secret],
    // an identity is removed with its member, never by a pruning pass
    prune: { keep: [kinds.Secret] },
    async reconcile(ensemble, ctx: ReconcileContext) {
      const { name: object } = ensemble.metadata;
      const { replicas } = ensemble.spec;
      for (let index = 0; index < replicas; index++)
        if ((await ctx.get(kinds.Secret, memberOf(object, index))) === undefined)
          await ctx.createOnce(kinds.Secret, {
            metadata: { name: memberOf(object, index) },
            stringData: { key: randomBytes(18).toString('base64url') },
          });
      // the seeded bug takes a scale-down for one step: the member just past the size
      const end = scaleDown === 'removes-the-member-that-left' ? replicas + 1 : MAX_MEMBERS;
      for (let index = replicas; index < end; index++)
        if ((await ctx.get(kinds.Secret, memberOf(object, index))) !== undefined)
          await ctx.delete(kinds.Secret, memberOf(object, index));
      return { status: { members: replicas }, ready: { status: true, reason: 'Scaled' } };
    },
  });
}
