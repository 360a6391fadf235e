// The resource of the status-restart tests' operators (banner*.ts): a Banner
// whose status alone carries the rendered text — no owned objects, so nothing
// but the status write, the operator's own requeue and a restart of its roles
// brings a reconcile back. The operator comes back once, 1.5 s after a new
// generation, to check the banner was recorded; the seeded bug also remembers,
// in its process, what it returned, and counts a status still behind that
// memory a second later as a reset.
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

/** How long the seeded bug allows the status writer to be behind: it is milliseconds, usually. */
const GRACE_MS = 1_000;
/** When the operator comes back to check, past the grace. */
const CHECK_AFTER_MS = 1_500;

export function bannersOperator(name: string, memory: Memory) {
  /** object uid → the generation this process returned as shown, and since when */
  const returned = new Map<string, { readonly generation: number; readonly at: number }>();
  return defineOperator({
    name,
    for: Banner,
    async reconcile(banner, _ctx: ReconcileContext) {
      const generation = banner.metadata.generation ?? 0;
      const status = banner.status ?? {};
      const shown = status.shownGeneration === generation;
      // a status still behind what this process returned a second ago is taken for a
      // reset (a restore from backup); but another role writes the status, and it
      // may be down for longer than that
      const remembered = returned.get(banner.metadata.uid);
      const reset =
        memory === 'remembers-what-it-returned' &&
        !shown &&
        remembered?.generation === generation &&
        Date.now() - remembered.at >= GRACE_MS;
      if (remembered?.generation !== generation)
        returned.set(banner.metadata.uid, { generation, at: Date.now() });
      const { text, style } = banner.spec;
      return {
        status: {
          text: style === 'loud' ? text.toUpperCase() : text,
          shownGeneration: generation,
          resets: (status.resets ?? 0) + (reset ? 1 : 0),
        },
        ready: { status: true, reason: 'Shown' },
        ...(shown ? {} : { requeueAfterMs: CHECK_AFTER_MS }),
      };
    },
  });
}
