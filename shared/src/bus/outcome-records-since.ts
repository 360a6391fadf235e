// An operator's outcome records from a moment on, in the stream's order: what
// a reconciler that takes a partition reads to inherit the own writes made
// there (handed-down-writes.ts). On nats-server >= 2.11, pages of batched
// direct gets on the shared inbox; nats.js' ordered consumer, which the older
// server needs, stays on the server after each read (runtime users may not
// delete consumers, ADR 0015), one more per partition taken.
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { directBatch } from './last-messages.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

/** One stored record: its subject, its body, when it was stored (ms). */
export type TakeRecord = (subject: string, data: Uint8Array, storedAtMs: number) => void;

export interface RecordsRead {
  /**
   * Counts the records stored since `fromMs`; when `tooMany(count)`, reads
   * nothing and answers 'too-many'. Otherwise feeds them to `take` in order
   * until none is left or `deadlineAtMs` passes ('late').
   */
  read(
    fromMs: number,
    tooMany: (count: number) => boolean,
    take: TakeRecord,
    deadlineAtMs: number,
  ): Promise<'read' | 'too-many' | 'late'>;
}

/** Records a page of a batched read holds at most. */
const PAGE = 256;

export function outcomeRecordsSince(
  bus: {
    readonly js: JetStreamClient;
    readonly jsm: Pick<JetStreamManager, 'getOptions'>;
    /** where batched direct gets go (nats-server >= 2.11); without it, an ordered consumer */
    readonly batchVia: Pick<NatsConnection, 'requestMany'> | undefined;
  },
  controller: string,
  now: () => number = Date.now,
): RecordsRead {
  const filter = subjects.outcomesOfController(controller);
  const { batchVia, jsm, js } = bus;
  const slowly = throughConsumer(js, filter, now);
  if (batchVia === undefined) return slowly;
  return {
    async read(fromMs, tooMany, take, deadlineAtMs) {
      try {
        return await batched(batchVia, jsm, filter, now, fromMs, tooMany, take, deadlineAtMs);
      } catch {
        // a stream without direct gets (made before they were allowed), a reconnect to 2.10:
        // read again from the start the slow way (taken again in order, the latest still last)
        return slowly.read(fromMs, tooMany, take, deadlineAtMs);
      }
    },
  };
}

/** Pages of batched direct gets on the shared inbox: the first from the moment, then from the last seen. */
async function batched(
  via: Pick<NatsConnection, 'requestMany'>,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  filter: string,
  now: () => number,
  ...[fromMs, tooMany, take, deadlineAtMs]: Parameters<RecordsRead['read']>
): ReturnType<RecordsRead['read']> {
  const page = (from: { start_time: string } | { seq: number }) =>
    directBatch(
      via,
      jsm,
      Streams.outcomes,
      { ...from, next_by_subj: filter, batch: PAGE },
      /not found/i,
    );
  let answer = await page({ start_time: new Date(fromMs).toISOString() });
  if (tooMany(answer.messages.length + answer.pending)) return 'too-many';
  for (;;) {
    for (const record of answer.messages) take(record.subject, record.data, storedAt(record));
    const last = answer.messages.at(-1);
    if (answer.pending === 0 || last === undefined) return 'read';
    if (now() > deadlineAtMs) return 'late';
    answer = await page({ seq: last.seq + 1 });
  }
}

function storedAt(record: { readonly header: { last(name: string): string } | undefined }): number {
  return Date.parse(record.header?.last('Nats-Time-Stamp') ?? '') || 0;
}

/** nats-server 2.10: an ordered consumer from the moment on, deleted after (where the user may). */
function throughConsumer(js: JetStreamClient, filter: string, now: () => number): RecordsRead {
  return {
    async read(fromMs, tooMany, take, deadlineAtMs) {
      const consumer = await js.consumers.get(Streams.outcomes, {
        filter_subjects: [filter],
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: new Date(fromMs).toISOString(),
      });
      try {
        const pending = (await consumer.info()).num_pending;
        if (tooMany(pending)) return 'too-many';
        if (pending === 0) return 'read';
        const messages = await consumer.consume();
        const deadline = setTimeout(() => void messages.close(), Math.max(0, deadlineAtMs - now()));
        try {
          for await (const message of messages) {
            take(message.subject, message.data, Math.floor(message.info.timestampNanos / 1e6));
            if (message.info.pending === 0) return 'read';
          }
          return 'late';
        } finally {
          clearTimeout(deadline);
          await messages.close();
        }
      } finally {
        // an ordered consumer outlives its reader on the server until it is idle long enough
        await consumer.delete().catch(() => undefined);
      }
    },
  };
}
