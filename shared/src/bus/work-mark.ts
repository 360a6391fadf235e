// A work mark: "this object needs a reconcile". It carries only the key (the
// reconciler reads the current object itself) plus where the mark came from.
import { z } from 'zod';
import type { ObjectKey } from '../kube/refs.js';

export const WorkReasons = ['watch', 'relist', 'resync', 'owned', 'redrive', 'requeue'] as const;
export type WorkReason = (typeof WorkReasons)[number];

export const WorkMarkSchema = z.object({
  key: z.object({
    group: z.string(),
    resource: z.string().min(1),
    namespace: z.string(),
    name: z.string().min(1),
  }),
  /** the event that caused the mark, if any */
  eventId: z.string().optional(),
  reason: z.enum(WorkReasons),
  traceparent: z.string().optional(),
  time: z.string(),
});

export type WorkMark = z.infer<typeof WorkMarkSchema>;

const encoder = new TextEncoder();

export function encodeWorkMark(mark: Omit<WorkMark, 'key'> & { key: ObjectKey }): Uint8Array {
  return encoder.encode(JSON.stringify({ ...mark, key: { ...mark.key } }));
}
