// `kubebus lag`: how far behind the consumers are — per consumer (one per
// controller and partition): messages not yet delivered, delivered but not
// acknowledged, redelivered, and the age of the oldest message it has not
// finished with.
import { Streams } from '@kubebus/shared/bus';
import { jetstreamManager, type ConsumerInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

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

function age(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 120_000) return `${(ms / 1_000).toFixed(1)}s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)}m`;
  return `${Math.round(ms / 3_600_000)}h`;
}

/** An aligned table, widest cell per column. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
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
      age(lag.oldestMs),
    ]),
  );
}
