// The resource of the status-restart tests' operators (banner*.ts): a Banner
// whose status alone carries the rendered text — no owned objects, so nothing
// but the status write and the operator's own requeue brings a reconcile back.
// The operator comes back once, a second after a new generation, to check the
// banner was recorded; the seeded bug also remembers, in its process, what it
// returned, and counts a status behind that memory as a reset.
import { defineOperator, defineResource, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

export const Banner = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Banner',
  scope: 'Namespaced',
  spec: z.object({
    text: z.string().min(1).max(20),
    style: z.enum(['plain', 'loud']).optional(),
  }),
  status: z.object({ text: z.string(), shownGeneration: z.int(), resets: z.int() }).partial(),
});

/** How the operator tells its own lag from a reset status. */
export type Memory = 'reads-the-status' | 'remembers-what-it-returned';

export function bannersOperator(name: string, memory: Memory) {
  /** object uid → the generation this process last returned as shown */
  const returned = new Map<string, number>();
  return defineOperator({
    name,
    for: Banner,
    async reconcile(banner, _ctx: ReconcileContext) {
      const generation = banner.metadata.generation ?? 0;
      const status = banner.status ?? {};
      const shown = status.shownGeneration === generation;
      // a status behind what this process returned is taken for a reset (a restore
      // from backup); but another role writes the status after the reconcile returns
      const reset =
        memory === 'remembers-what-it-returned' &&
        !shown &&
        returned.get(banner.metadata.uid) === generation;
      returned.set(banner.metadata.uid, generation);
      const { text, style } = banner.spec;
      return {
        status: {
          text: style === 'loud' ? text.toUpperCase() : text,
          shownGeneration: generation,
          resets: (status.resets ?? 0) + (reset ? 1 : 0),
        },
        ready: { status: true, reason: 'Shown' },
        ...(shown ? {} : { requeueAfterMs: 1_000 }),
      };
    },
  });
}
