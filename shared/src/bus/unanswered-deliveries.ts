// Which deliveries of one work message killed their process (out of memory, a
// crash in native code, `process.exit` in user code, or a hang past the ack
// wait). JetStream counts every delivery (`info.deliveryCount`), answered ones
// too — a nak with a delay (a retry, a requeue-after, a wait for a dependency
// that is down) and a hand-back each add one, and those are unbounded — so
// the count alone cannot tell a crash loop from an object polled every minute.
//
// A record per object tells them apart. Every answer that gives the message
// back writes it (`started: false`); a delivery that finds the delivery
// before it answered is an ordinary one. A delivery that does not is a
// suspect: it runs with no other suspect beside it, and records that it
// started (`started: true`) before its reconcile runs. A suspect's start
// found unanswered by the next delivery is a death blamed on this message
// alone: objects that merely waited, or ran beside it, are never blamed.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ObjectKey } from '../runtime/object-key.js';

export const DeliveryRecordSchema = z.object({
  /** the message (its stream sequence): a newer mark for the object starts again */
  seq: z.number().int().positive(),
  /** the delivery the record is about */
  delivery: z.number().int().positive(),
  /** deaths blamed on the message before that delivery */
  crashes: z.number().int().nonnegative(),
  /** true: that delivery started running (a suspect); false: it was answered */
  started: z.boolean(),
});
export type DeliveryRecord = z.infer<typeof DeliveryRecordSchema>;

export interface Assessment {
  /** an earlier delivery went unanswered: run alone, record the start */
  readonly suspect: boolean;
  /** deaths blamed on the message so far */
  readonly crashes: number;
}

/** Delivery `delivery` of message `seq`, given the object's last record (if any). */
export function assess(
  last: DeliveryRecord | undefined,
  seq: number,
  delivery: number,
): Assessment {
  if (delivery <= 1) return { suspect: false, crashes: 0 };
  // nothing recorded of this message (or its consumer was made again and
  // counts from 1): the delivery before went unanswered, with no one to blame
  if (last === undefined || last.seq !== seq || last.delivery >= delivery)
    return { suspect: true, crashes: 0 };
  return {
    suspect: last.started || last.delivery < delivery - 1,
    crashes: last.crashes + (last.started ? 1 : 0),
  };
}

/** The later of this process' and the bucket's record of message `seq` (this process' on a tie). */
export function laterRecord(
  local: DeliveryRecord | undefined,
  stored: DeliveryRecord | undefined,
  seq: number,
): DeliveryRecord | undefined {
  const mine = [local, stored].filter((r): r is DeliveryRecord => r?.seq === seq);
  return mine.reduce<DeliveryRecord | undefined>(
    (later, r) => (later === undefined || r.delivery > later.delivery ? r : later),
    undefined,
  );
}

/**
 * The record's key in the deliveries bucket: `<controller>.<digest of the
 * object>`, so an operator's NATS users may write only their own
 * (`$KV.kubebus_deliveries.<controller>.>`), whatever characters the name has.
 */
export function deliveryRecordKey(controller: string, key: ObjectKey): string {
  const digest = createHash('sha256')
    .update(`${key.group}/${key.resource}/${key.namespace}/${key.name}`)
    .digest('hex')
    .slice(0, 40);
  return `${controller}.${digest}`;
}
