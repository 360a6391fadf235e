// A work mark: "this object needs a reconcile". It carries only the key (the
// reconciler reads the current object itself) plus where the mark came from.
// The key is checked by Kubernetes' naming rules: a mark with a key no object
// can have is malformed (parked in the DLQ with the reason), never reconciled.
import { z } from 'zod';
import { ObjectKeySchema } from '../kube/names.js';
import type { ObjectKey } from '../kube/refs.js';

export const WorkReasons = [
  'watch',
  'relist',
  'resync',
  'owned',
  'redrive',
  'requeue',
  /** a new version of the operator took the partition (upgrade-sweep.ts) */
  'upgrade',
] as const;
export type WorkReason = (typeof WorkReasons)[number];

/** How long a mark's `cause` may be (the watcher cuts a longer one). */
export const MAX_CAUSE = 600;

export const WorkMarkSchema = z.object({
  key: ObjectKeySchema,
  /** the event that caused the mark, if any */
  eventId: z.string().optional(),
  /** the object whose change it was, when another than the marked one (`secrets shop/db`) */
  cause: z.string().max(MAX_CAUSE).optional().catch(undefined),
  reason: z.enum(WorkReasons),
  traceparent: z.string().optional(),
  time: z.string(),
  /**
   * A retry that waited outside its partition (later-requeues.ts): the
   * failures counted before it (its retry budget) and in a row (its backoff).
   */
  failures: z
    .object({
      attempts: z.int().min(0).max(10_000),
      streak: z.int().min(0).max(10_000),
      external: z.int().min(0).max(10_000).optional(),
    })
    .optional()
    .catch(undefined),
});

export type WorkMark = z.infer<typeof WorkMarkSchema>;

const encoder = new TextEncoder();

export function encodeWorkMark(mark: Omit<WorkMark, 'key'> & { key: ObjectKey }): Uint8Array {
  return encoder.encode(JSON.stringify({ ...mark, key: { ...mark.key } }));
}

/** A work mark off the bus, or why it is not one (the reason a dead letter carries). */
export function parseWorkMark(
  data: Uint8Array,
):
  { readonly ok: true; readonly mark: WorkMark } | { readonly ok: false; readonly reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(data));
  } catch (error) {
    return { ok: false, reason: `malformed work mark: ${(error as Error).message}` };
  }
  const parsed = WorkMarkSchema.safeParse(json);
  if (parsed.success) return { ok: true, mark: parsed.data };
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return { ok: false, reason: `malformed work mark: ${issues.join('; ')}` };
}
