// What each controller did with each object, recorded on the bus as small
// records beside the object's history: `kubebus history` joins them with the
// revisions, `kubebus status` shows the last one. Published without waiting
// for an acknowledgement: recording never slows or fails a reconcile, and a
// record lost in a NATS outage only leaves a gap in what the CLI shows.
import type { NatsConnection } from '@nats-io/nats-core';
import { z } from 'zod';
import { redactCredentials } from '../errors/public-text.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { ReconcileOutcome } from '../runtime/controller.js';
import { readMessages } from './history.js';
import type { HandedDownWrite } from './own-writes.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

const HandedDownWriteSchema = z.object({
  key: z.object({
    group: z.string(),
    resource: z.string(),
    namespace: z.string(),
    name: z.string(),
  }),
  uid: z.string(),
  resourceVersion: z.string(),
  path: z.string(),
  after: z.number().int().nonnegative(),
  deleted: z.literal(true).optional(),
});

/**
 * The largest record: the stream takes messages of at most 8 KiB
 * (topology.ts); the own writes handed down fill what the rest leaves, less
 * the headroom of the publish's framing.
 */
const RECORD_BYTES = 8 * 1024 - 256;

export const OutcomeRecordSchema = z.object({
  controller: z.string(),
  result: z.string(),
  ms: z.number().nonnegative(),
  attempt: z.number().int().positive(),
  error: z.string().optional(),
  /** why nothing was done (result "skipped") */
  note: z.string().optional(),
  /** the resourceVersion the controller's write produced */
  wrote: z.string().optional(),
  reconcileId: z.string(),
  traceparent: z.string(),
  eventId: z.string().optional(),
  /** the object whose change it followed, when another than its own (`secrets shop/db`) */
  cause: z.string().optional(),
  /** the reconcile's own writes, for the primary's next owner (handed-down-writes.ts) */
  own: z.array(HandedDownWriteSchema).optional(),
  at: z.string(),
});
export type OutcomeRecord = z.infer<typeof OutcomeRecordSchema>;

export class OutcomeRecorder {
  readonly #encoder = new TextEncoder();

  constructor(
    private readonly nc: NatsConnection,
    private readonly controller: string,
  ) {}

  /** `own`: the reconcile's own writes, handed down to the primary's next owner (the last ones that fit) */
  record(outcome: ReconcileOutcome, own: readonly HandedDownWrite[] = []): void {
    const record: OutcomeRecord = {
      controller: this.controller,
      // a success that did nothing is told apart: "skipped", with why
      result: outcome.skipped === undefined ? outcome.result : 'skipped',
      ...(outcome.skipped === undefined ? {} : { note: outcome.skipped }),
      ...(outcome.wrote === undefined ? {} : { wrote: outcome.wrote }),
      ms: Math.round(outcome.seconds * 1_000),
      attempt: outcome.attempt,
      // `kubebus history` shows it to whoever reads the bus: an error's quoted URL keeps no credentials
      ...(outcome.error === undefined ? {} : { error: redactCredentials(outcome.error) }),
      reconcileId: outcome.reconcileId,
      traceparent: outcome.traceparent,
      ...(outcome.eventId === undefined ? {} : { eventId: outcome.eventId }),
      ...(outcome.cause === undefined ? {} : { cause: outcome.cause }),
      at: new Date().toISOString(),
    };
    const alone = this.#encoder.encode(JSON.stringify(record));
    // the rest of the record is bounded by its fields, but not below 8 KiB in every case
    if (alone.byteLength > RECORD_BYTES) return;
    const handedDown = fitting(own, RECORD_BYTES - alone.byteLength - ',"own":[]'.length);
    const encoded =
      handedDown.length === 0
        ? alone
        : this.#encoder.encode(JSON.stringify({ ...record, own: handedDown }));
    try {
      this.nc.publish(subjects.outcome(this.controller, outcome.key), encoded);
    } catch {
      // closed or draining: a gap in the record, never a failed reconcile
    }
  }
}

/** The last of `own` whose JSON fits in `budget` bytes. */
function fitting(own: readonly HandedDownWrite[], budget: number): HandedDownWrite[] {
  const kept: HandedDownWrite[] = [];
  let bytes = 0;
  for (let i = own.length - 1; i >= 0; i--) {
    const write = own[i] as HandedDownWrite;
    bytes += Buffer.byteLength(JSON.stringify(write)) + 1;
    if (bytes > budget) break;
    kept.unshift(write);
  }
  return kept;
}

/**
 * A stored outcome record of `key`, or undefined: unreadable, or not stored
 * under its own controller's subject. NATS checked who may publish there, not
 * the `controller` the body names: another role's user writing "I am the
 * reconciler" on its own subject is not the reconciler.
 */
export function outcomeOf(
  message: { readonly subject: string; readonly data: Uint8Array },
  key: ObjectKey,
): OutcomeRecord | undefined {
  try {
    const record = OutcomeRecordSchema.parse(JSON.parse(new TextDecoder().decode(message.data)));
    return subjects.outcome(record.controller, key) === message.subject ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Every recorded outcome for the object, from every controller, oldest first. */
export async function readOutcomes(nc: NatsConnection, key: ObjectKey): Promise<OutcomeRecord[]> {
  const messages = await readMessages(nc, Streams.outcomes, subjects.outcomesOf(key)).catch(
    () => [],
  );
  return messages.flatMap((message) => outcomeOf(message, key) ?? []);
}
