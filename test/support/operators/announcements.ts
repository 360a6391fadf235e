// The lagging schedule's operators (announced*.ts): an Announcement whose
// every text is announced once, as a Kubernetes Event, per generation. Where
// the operator remembers that it announced, and how it finds it again, is the
// whole difference: in the object's own status, or on a ConfigMap it owns
// read back by name — both kept at least as new as the operator's own last
// word by read-your-own-writes (ADR 0019: the status this process last
// intended, the ConfigMap it last applied) — or on that ConfigMap found by
// label (ctx.list, which reads the bus as it stands: a bus behind the
// apiserver lists no marker yet, and the operator announces again).
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

type Memory = 'in-status' | 'on-a-configmap' | 'on-a-configmap-listed';

const MARKER_LABEL = 'test.kubebus.dev/announcement';

/** The marker ConfigMap, read back by name or found by label. */
async function markerOf(ctx: ReconcileContext, object: string, memory: Memory) {
  if (memory === 'on-a-configmap') return ctx.get(kinds.ConfigMap, `${object}-announced`);
  const listed = await ctx.list(kinds.ConfigMap, { labelSelector: `${MARKER_LABEL}=${object}` });
  return listed[0];
}

export function announcementOperator(name: string, memory: Memory) {
  return defineOperator({
    name,
    for: Announcement,
    owns: [kinds.ConfigMap],
    async reconcile(announcement, ctx: ReconcileContext) {
      const { name: object, uid } = announcement.metadata;
      const generation = announcement.metadata.generation ?? 0;
      const { text } = announcement.spec;
      const marker = memory === 'in-status' ? undefined : await markerOf(ctx, object, memory);
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
      if (memory !== 'in-status')
        await ctx.apply(kinds.ConfigMap, {
          metadata: { name: `${object}-announced`, labels: { [MARKER_LABEL]: object } },
          data: { generation: String(due ? generation : announced) },
        });
      return {
        status: { length: text.length, announced: Math.max(announced ?? 0, generation) },
        ready: { status: true, reason: 'Announced' },
      };
    },
  });
}
