// Where each object's time goes, from the driver's send to converged, stage by
// stage, as a histogram per stage: the bus' records (bus-records.ts) joined
// with the driver's sightings of each write (observer.ts). All clocks are the
// one machine's wall clock, in ms.
import { origins } from '@kubebus/shared/bus';
import type { BusRecords } from './bus-records.js';
import type { Sightings } from './observer.js';

export interface PhaseTimes {
  readonly generation: 1 | 2;
  /** "ns/name" → when the driver sent the POST (PATCH), Date ms */
  readonly sentAt: ReadonlyMap<string, number>;
  /** "ns/name" → converged, Date ms */
  readonly convergedAt: ReadonlyMap<string, number>;
  /** outcomes ending at or after this belong to the next phase */
  readonly endsAt: number;
}

export type Stages = Map<string, number[]>;

const OPERATOR = 'databasecluster';
/** the status writer's outcomes name its operator (ADR 0015) */
const STATUS_WRITER = origins.statusWriter(OPERATOR);

/** One list of durations (ms) per stage, in path order, over the phase's objects. */
export function stagesOf(
  phase: PhaseTimes,
  records: BusRecords,
  seen: ReadonlyMap<string, Sightings>,
): Stages {
  const stages: Stages = new Map();
  const add = (stage: string, from: number | undefined, to: number | undefined) => {
    if (from === undefined || to === undefined) return;
    let list = stages.get(stage);
    if (list === undefined) stages.set(stage, (list = []));
    list.push(to - from);
  };
  const events = group(
    records.events.filter((e) => e.generation === phase.generation && e.op !== 'delete'),
  );
  const outcomes = group(records.outcomes);
  const reconciles: number[] = [];
  const workerTimes: number[] = [];
  const statusWrites: number[] = [];
  const statusSkips: number[] = [];
  const inProcessWrites: number[] = [];
  for (const [key, sent] of phase.sentAt) {
    const event = events.get(key)?.sort((a, b) => a.storedAt - b.storedAt)[0];
    const mine = (controller: string) =>
      (outcomes.get(key) ?? [])
        .filter(
          (o) => o.controller === controller && o.startedAt >= sent && o.endedAt < phase.endsAt,
        )
        .sort((a, b) => a.startedAt - b.startedAt);
    const operator = mine(OPERATOR);
    const writer = mine(STATUS_WRITER);
    reconciles.push(operator.length);
    // what the object held a worker for: with W workers busy, wall ≈ N × this ÷ W
    workerTimes.push(operator.reduce((sum, o) => sum + (o.endedAt - o.startedAt), 0));
    statusWrites.push(writer.length);
    statusSkips.push(writer.filter((o) => o.result === 'skipped').length);
    const first = operator[0];
    const firstDone = operator.find((o) => o.result === 'success');
    // The intent is published at the end of the reconcile's body, before its
    // work message is acked and its outcome recorded: the writer may start
    // before that record, so its first run is the first to end after the
    // reconcile started.
    const write = writer.find((o) => firstDone !== undefined && o.endedAt >= firstDone.startedAt);
    const s = seen.get(key);
    add('1 watch: sent → watcher has the event', sent, event?.watchedAt);
    add('2 publish: event built → stored (event + work mark)', event?.watchedAt, event?.storedAt);
    add('3 queue: stored → first reconcile starts', event?.storedAt, first?.startedAt);
    if (phase.generation === 1) {
      add('4a reconcile start → finalizer seen', first?.startedAt, s?.finalizer);
      add('4b reconcile start → Secret seen', first?.startedAt, s?.owned.secret);
      add('4c reconcile start → Service seen', first?.startedAt, s?.owned.service);
      add('4d reconcile start → ConfigMap seen', first?.startedAt, s?.owned.configMap);
      add('4e reconcile start → StatefulSet seen', first?.startedAt, s?.owned.statefulSet);
    } else {
      add(
        '4e reconcile start → StatefulSet (new replicas) seen',
        first?.startedAt,
        s?.statefulSet2,
      );
    }
    add(
      '5 first successful reconcile: start → end (status written or intent published, work acked)',
      firstDone?.startedAt,
      firstDone?.endedAt,
    );
    for (const later of operator.filter((o) => o !== firstDone))
      add('5b every other reconcile: start → end', later.startedAt, later.endedAt);
    // in one process the write ends inside the reconcile (ADR 0028): no queue to measure
    // (from the bus a writer may start a moment before the reconcile's end is recorded)
    const inProcess =
      write !== undefined && firstDone !== undefined && write.endedAt <= firstDone.endedAt;
    inProcessWrites.push(inProcess ? 1 : 0);
    if (!inProcess)
      add(
        '6 intent queue: reconcile end → status writer starts',
        firstDone?.endedAt,
        write?.startedAt,
      );
    add('7 status write: writer start → end', write?.startedAt, write?.endedAt);
    add(
      '8 status seen: writer end → driver sees it',
      write?.endedAt,
      phase.generation === 1 ? s?.status1 : s?.status2,
    );
    add('total: sent → converged', sent, phase.convergedAt.get(key));
  }
  stages.set('reconciles per object (count)', reconciles);
  stages.set('worker time per object: its reconciles, summed', workerTimes);
  stages.set('status-writer runs per object (count)', statusWrites);
  stages.set('status-writer runs that wrote nothing, per object (count)', statusSkips);
  stages.set(
    'first status written inside the reconcile (in process), per object (count)',
    inProcessWrites,
  );
  return stages;
}

function group<T extends { key: string }>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    let list = out.get(item.key);
    if (list === undefined) out.set(item.key, (list = []));
    list.push(item);
  }
  return out;
}

const BUCKETS_MS = [10, 30, 100, 300, 1_000, 3_000, 10_000];

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;

/** A markdown table: per stage its count, p50/p90/p99/max and a histogram over fixed ms buckets. */
export function formatStages(stages: Stages): string {
  const header = [
    'stage',
    'n',
    'p50',
    'p90',
    'p99',
    'max',
    ...BUCKETS_MS.map((b) => `<${b < 1_000 ? `${b}ms` : `${b / 1_000}s`}`),
    '≥10s',
  ];
  const rows = [...stages].map(([stage, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const count = stage.endsWith('(count)');
    const fmt = (v: number) => (count ? v.toFixed(0) : `${Math.round(v)}`);
    const mean = sorted.reduce((s, v) => s + v, 0) / Math.max(1, sorted.length);
    const histogram = count
      ? BUCKETS_MS.map(() => '').concat([`mean ${mean.toFixed(2)}`])
      : [...BUCKETS_MS, Infinity].map(
          (b, i) =>
            `${sorted.filter((v) => v < b && v >= (BUCKETS_MS[i - 1] ?? -Infinity)).length}`,
        );
    return [
      stage,
      `${sorted.length}`,
      fmt(quantile(sorted, 0.5)),
      fmt(quantile(sorted, 0.9)),
      fmt(quantile(sorted, 0.99)),
      fmt(sorted.at(-1) ?? Number.NaN),
      ...histogram,
    ];
  });
  return [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}
