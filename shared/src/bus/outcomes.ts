// What each controller did with each object, recorded on the bus as small
// records beside the object's history: `kubebus history` joins them with the
// revisions, `kubebus status` shows the last one. Published without waiting
// for an acknowledgement: recording never slows or fails a reconcile, and a
// record lost in a NATS outage only leaves a gap in what the CLI shows.
import type { NatsConnection } from '@nats-io/nats-core';
import { z } from 'zod';
import type { ObjectKey } from '../runtime/object-key.js';
import type { ReconcileOutcome } from '../runtime/controller.js';
import { readMessages } from './history.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

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
  at: z.string(),
});
export type OutcomeRecord = z.infer<typeof OutcomeRecordSchema>;

export class OutcomeRecorder {
  readonly #encoder = new TextEncoder();

  constructor(
    private readonly nc: NatsConnection,
    private readonly controller: string,
  ) {}

  record(outcome: ReconcileOutcome): void {
    const record: OutcomeRecord = {
      controller: this.controller,
      // a success that did nothing is told apart: "skipped", with why
      result: outcome.skipped === undefined ? outcome.result : 'skipped',
      ...(outcome.skipped === undefined ? {} : { note: outcome.skipped }),
      ...(outcome.wrote === undefined ? {} : { wrote: outcome.wrote }),
      ms: Math.round(outcome.seconds * 1_000),
      attempt: outcome.attempt,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      reconcileId: outcome.reconcileId,
      traceparent: outcome.traceparent,
      ...(outcome.eventId === undefined ? {} : { eventId: outcome.eventId }),
      at: new Date().toISOString(),
    };
    try {
      this.nc.publish(
        subjects.outcome(this.controller, outcome.key),
        this.#encoder.encode(JSON.stringify(record)),
      );
    } catch {
      // closed or draining: a gap in the record, never a failed reconcile
    }
  }
}

/** Every recorded outcome for the object, from every controller, oldest first. */
export async function readOutcomes(nc: NatsConnection, key: ObjectKey): Promise<OutcomeRecord[]> {
  const messages = await readMessages(nc, Streams.outcomes, subjects.outcomesOf(key)).catch(
    () => [],
  );
  return messages.flatMap((message) => {
    try {
      return [OutcomeRecordSchema.parse(JSON.parse(new TextDecoder().decode(message.data)))];
    } catch {
      return [];
    }
  });
}
