// The lagging schedule's operators (announced*.ts): an Announcement whose
// every text is announced once, as a Kubernetes Event, per generation. Where
// the operator remembers that it announced is the whole difference: in the
// object's own status (which the status writer writes, so a reconcile on a
// bus behind the apiserver reads the status from before — read-your-own-
// writes covers what a reconcile writes, not the status: ADR 0019), or on a
// ConfigMap it owns and reads back by name (which read-your-own-writes keeps
// at least as new as its own last write).
//
// One Event per generation is also why the announcements need every change:
// under `unobserved` schedules (two changes coalesced) both twins announce
// once for two generations. The lagging tests run them with --perturb lagging.
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

export const Announcement = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Announcement',
  scope: 'Namespaced',
  spec: z.object({ text: z.string().min(1).max(20) }),
  status: z.object({ length: z.int(), announced: z.int() }).partial(),
});

type Memory = 'in-status' | 'on-a-configmap';

export function announcementOperator(name: string, memory: Memory) {
  return defineOperator({
    name,
    for: Announcement,
    owns: [kinds.ConfigMap],
    async reconcile(announcement, ctx: ReconcileContext) {
      const { name: object, uid } = announcement.metadata;
      const generation = announcement.metadata.generation ?? 0;
      const { text } = announcement.spec;
      const marker =
        memory === 'in-status' ? undefined : await ctx.get(kinds.ConfigMap, `${object}-announced`);
      const mine = marker?.metadata.ownerReferences?.some((ref) => ref.uid === uid) === true;
      const announced =
        memory === 'in-status'
          ? announcement.status?.announced
          : mine
            ? Number((marker as { data?: Record<string, string> }).data?.['generation'])
            : undefined;
      // a generation never goes back: an older one read (a stale primary) was announced already
      const due = announced === undefined || announced < generation;
      if (due) await ctx.event('Normal', 'Announced', `now: ${text}`);
      // applied every time: what a reconcile does not apply, the runtime prunes
      if (memory === 'on-a-configmap')
        await ctx.apply(kinds.ConfigMap, {
          metadata: { name: `${object}-announced` },
          data: { generation: String(due ? generation : announced) },
        });
      return {
        status: { length: text.length, announced: Math.max(announced ?? 0, generation) },
        ready: { status: true, reason: 'Announced' },
      };
    },
  });
}
