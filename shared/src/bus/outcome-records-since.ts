// An operator's outcome records from a moment on, in the stream's order: what
// a reconciler that takes a partition reads to inherit the own writes made
// there (handed-down-writes.ts). On nats-server >= 2.11, pages of batched
// direct gets on the shared inbox; on the older server, one pass through a
// consumer (one-pass.ts).
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from '../obs/logger.js';
import type { AnswerGatherer } from './inbox-requests.js';
import { directBatch } from './last-messages.js';
import { readOnePass } from './one-pass.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

/** One stored record: its subject, its body, when it was stored (ms). */
export type TakeRecord = (subject: string, data: Uint8Array, storedAtMs: number) => void;

export type ReadResult = 'read' | 'too-many' | 'late';

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
  ): Promise<ReadResult>;
}

/** Where a read through a consumer starts: a moment, or the sequence after the last record taken. */
export type ReadFrom = { readonly ms: number } | { readonly seq: number };

/** Reads records through a consumer (nats-server 2.10, or after a batch failed). */
export type ConsumerRead = (
  from: ReadFrom,
  tooMany: (count: number) => boolean,
  take: TakeRecord,
  deadlineAtMs: number,
) => Promise<ReadResult>;

/** Records a page of a batched read holds at most. */
export const PAGE = 256;

export function outcomeRecordsSince(
  bus: {
    readonly nc: NatsConnection;
    readonly jsm: Pick<JetStreamManager, 'getOptions'>;
    /** where batched direct gets go (nats-server >= 2.11); without it, one pass through a consumer */
    readonly batchVia: NatsConnection | AnswerGatherer | undefined;
  },
  controller: string,
  log: Logger,
  now: () => number = Date.now,
): RecordsRead {
  const filter = subjects.outcomesOfController(controller);
  const slowly = throughConsumer(bus.nc, filter, now);
  if (bus.batchVia === undefined)
    return { read: (fromMs, ...rest) => slowly({ ms: fromMs }, ...rest) };
  return pagedRecords(bus.batchVia, bus.jsm, filter, slowly, log, now);
}

/**
 * Pages of batched direct gets on the shared inbox: the first from the
 * moment, then from the last record seen. A page that fails hands the rest
 * to `slowly`, from the record after the last one taken (taking them again
 * from the start could stop, at the deadline, on an object's older write).
 */
export function pagedRecords(
  via: NatsConnection | AnswerGatherer,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  filter: string,
  slowly: ConsumerRead,
  log: Logger,
  now: () => number,
): RecordsRead {
  const { timeout } = jsm.getOptions();
  return {
    async read(fromMs, tooMany, take, deadlineAtMs) {
      let lastTaken: number | undefined;
      let counted = false;
      try {
        const page = (from: { start_time: string } | { seq: number }) =>
          directBatch(
            via,
            jsm,
            Streams.outcomes,
            { ...from, next_by_subj: filter, batch: PAGE },
            // nothing from the window's start on is an empty window; a page after
            // one that said more are pending that finds nothing failed to load
            'start_time' in from ? /not found/i : undefined,
            // the deadline bounds the wait for a page, not only the pages asked
            Math.max(1, Math.min(timeout ?? 5_000, deadlineAtMs - now())),
          );
        let answer = await page({ start_time: new Date(fromMs).toISOString() });
        if (tooMany(answer.messages.length + answer.pending)) return 'too-many';
        counted = true;
        for (;;) {
          for (const record of answer.messages) {
            take(record.subject, record.data, storedAt(record));
            lastTaken = record.seq;
          }
          if (answer.pending === 0 || lastTaken === undefined) return 'read';
          if (now() > deadlineAtMs) return 'late';
          answer = await page({ seq: lastTaken + 1 });
        }
      } catch (error) {
        if (now() > deadlineAtMs) return 'late';
        log.warn(
          { err: error, afterSeq: lastTaken },
          'a batched read of the outcome records failed: reading the rest through a consumer',
        );
        // a stream without direct gets (made before they were allowed), a reconnect to 2.10
        return slowly(
          lastTaken === undefined ? { ms: fromMs } : { seq: lastTaken + 1 },
          counted ? () => false : tooMany,
          take,
          deadlineAtMs,
        );
      }
    },
  };
}

function storedAt(record: { readonly header: { last(name: string): string } | undefined }): number {
  return Date.parse(record.header?.last('Nats-Time-Stamp') ?? '') || 0;
}

/** One pass (one-pass.ts) from `from` on. */
function throughConsumer(nc: NatsConnection, filter: string, now: () => number): ConsumerRead {
  return (from, tooMany, take, deadlineAtMs) =>
    readOnePass(
      nc,
      Streams.outcomes,
      filter,
      from,
      (record) => {
        take(record.subject, record.data, record.storedAtMs);
      },
      {
        tooMany,
        deadlineAt: performance.now() + (deadlineAtMs - now()),
      },
    );
}
