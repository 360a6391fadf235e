// `kubebus lag`: how far behind the consumers are — per consumer (one per
// controller and partition): messages not yet delivered, delivered but not
// acknowledged, redelivered, and the age of the oldest message it has not
// finished with.
import { Streams } from '@kubebus/shared/bus';
import { jetstreamManager, type ConsumerInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { formatAge, table } from './table.js';

export interface ConsumerLag {
  readonly stream: string;
  readonly consumer: string;
  readonly filter: string;
  /** not yet delivered */
  readonly pending: number;
  /** delivered, not yet acknowledged */
  readonly ackPending: number;
  readonly redelivered: number;
  /** age in ms of the oldest message not yet acknowledged, if any */
  readonly oldestMs: number | undefined;
}

const STREAMS = [Streams.work, Streams.status];

export async function readLag(nc: NatsConnection, now = Date.now()): Promise<ConsumerLag[]> {
  const jsm = await jetstreamManager(nc);
  const lags: ConsumerLag[] = [];
  for (const stream of STREAMS) {
    const consumers: ConsumerInfo[] = [];
    for await (const info of jsm.consumers.list(stream)) consumers.push(info);
    for (const info of consumers.sort((a, b) =>
      a.name.localeCompare(b.name, 'en', { numeric: true }),
    )) {
      const filter = info.config.filter_subject ?? info.config.filter_subjects?.join(',') ?? '>';
      let oldestMs: number | undefined;
      if (info.num_pending + info.num_ack_pending > 0) {
        // work-queue streams drop what is acknowledged: the first message the filter
        // still matches after the ack floor is the oldest unfinished one
        const oldest = await jsm.direct
          .getMessage(stream, { seq: info.ack_floor.stream_seq + 1, next_by_subj: filter })
          .catch(() => null);
        if (oldest !== null) oldestMs = Math.max(0, now - oldest.time.getTime());
      }
      lags.push({
        stream,
        consumer: info.name,
        filter,
        pending: info.num_pending,
        ackPending: info.num_ack_pending,
        redelivered: info.num_redelivered,
        oldestMs,
      });
    }
  }
  return lags;
}

export function formatLag(lags: readonly ConsumerLag[]): string {
  if (lags.length === 0) return 'no consumers: no reconciler or status writer has started\n';
  return table(
    ['STREAM', 'CONSUMER', 'PENDING', 'ACK PENDING', 'REDELIVERED', 'OLDEST'],
    lags.map((lag) => [
      lag.stream,
      lag.consumer,
      String(lag.pending),
      String(lag.ackPending),
      String(lag.redelivered),
      formatAge(lag.oldestMs),
    ]),
  );
}
