// What kubebus left on the bus, read once after the run (nothing on the hot
// path): each DatabaseCluster event's watch time (the CloudEvent's `time`, set
// by the watcher as it builds the event) and store time (JetStream's
// timestamp), and every reconcile outcome (start = at - ms, end = at) of the
// operator and of the status writer.
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

export interface EventRecord {
  /** "ns/name" */
  readonly key: string;
  readonly generation: number;
  readonly op: 'add' | 'update' | 'delete';
  /** when the watcher built the event (Date ms) */
  readonly watchedAt: number;
  /** when JetStream stored it (Date ms) */
  readonly storedAt: number;
}

export interface OutcomeRecord {
  readonly key: string;
  readonly controller: string;
  readonly result: string;
  readonly startedAt: number;
  readonly endedAt: number;
}

export interface BusRecords {
  readonly events: EventRecord[];
  readonly outcomes: OutcomeRecord[];
}

interface StoredMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly storedAt: number;
}

async function readAll(nc: NatsConnection, stream: string, filter: string) {
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: [filter],
    deliver_policy: DeliverPolicy.All,
  });
  const out: StoredMessage[] = [];
  if ((await consumer.info()).num_pending === 0) return out;
  const iterator = await consumer.consume();
  for await (const m of iterator) {
    out.push({
      subject: m.subject,
      data: m.data,
      storedAt: Date.parse(m.timestamp),
    });
    if (m.info.pending === 0) break;
  }
  await iterator.close();
  return out;
}

/** "<namespace>/<name>" from a subject ending in ….<namespace>.<name> (bench names have no dots). */
function keyOf(subject: string): string {
  const tokens = subject.split('.');
  return `${tokens.at(-2) ?? ''}/${tokens.at(-1) ?? ''}`;
}

const OPS: Readonly<Record<string, EventRecord['op'] | undefined>> = {
  add: 'add',
  update: 'update',
  delete: 'delete',
};

export async function readBusRecords(natsUrl: string): Promise<BusRecords> {
  const nc = await connect({ servers: natsUrl });
  try {
    const events: EventRecord[] = [];
    const decoder = new TextDecoder();
    // the DatabaseClusters' events only (group example.kubebus.dev is one dotted token, encoded)
    for (const m of await readAll(nc, 'KUBEBUS_EVENTS', 'kubebus.events.*.databaseclusters.>')) {
      try {
        const ce = JSON.parse(decoder.decode(m.data)) as {
          type?: string;
          time?: string;
          kbgeneration?: number | string;
        };
        const op = OPS[(ce.type ?? '').split('.').at(-1) ?? ''];
        if (op === undefined || ce.time === undefined) continue;
        events.push({
          key: keyOf(m.subject),
          generation: Number(ce.kbgeneration ?? 0),
          op,
          watchedAt: Date.parse(ce.time),
          storedAt: m.storedAt,
        });
      } catch {
        // not a structured CloudEvent: not one of the watcher's
      }
    }
    const outcomes: OutcomeRecord[] = [];
    for (const m of await readAll(nc, 'KUBEBUS_OUTCOMES', 'kubebus.outcomes.>')) {
      try {
        const r = JSON.parse(decoder.decode(m.data)) as {
          controller: string;
          result: string;
          ms: number;
          at: string;
        };
        const endedAt = Date.parse(r.at);
        outcomes.push({
          key: keyOf(m.subject),
          controller: r.controller,
          result: r.result,
          startedAt: endedAt - r.ms,
          endedAt,
        });
      } catch {
        // a record of another shape: left out
      }
    }
    return { events, outcomes };
  } finally {
    await nc.close();
  }
}
