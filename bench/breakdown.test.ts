import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatStages, stagesOf } from './breakdown.js';
import type { BusRecords } from './bus-records.js';
import type { Sightings } from './observer.js';

const KEY = 'bench-a/db-00000';
const sent = 1_000;

/** One object's create, every clock in ms from the same origin. */
const records: BusRecords = {
  events: [
    // a later revision of the same generation (the finalizer) must not be taken for the first
    { key: KEY, generation: 1, op: 'update', watchedAt: 1_400, storedAt: 1_402 },
    { key: KEY, generation: 1, op: 'add', watchedAt: 1_100, storedAt: 1_103 },
  ],
  outcomes: [
    // the writer starts before the reconcile's outcome is recorded (it is recorded after the ack)
    {
      key: KEY,
      controller: 'databasecluster.status-writer',
      result: 'success',
      startedAt: 1_695,
      endedAt: 1_760,
    },
    {
      key: KEY,
      controller: 'databasecluster',
      result: 'success',
      startedAt: 1_303,
      endedAt: 1_700,
    },
    {
      key: KEY,
      controller: 'databasecluster',
      result: 'success',
      startedAt: 1_710,
      endedAt: 1_730,
    },
    {
      key: KEY,
      controller: 'databasecluster.status-writer',
      result: 'skipped',
      startedAt: 1_731,
      endedAt: 1_740,
    },
    // the next phase's reconcile is not counted in this one
    {
      key: KEY,
      controller: 'databasecluster',
      result: 'success',
      startedAt: 9_000,
      endedAt: 9_100,
    },
  ],
};
const seen = new Map<string, Sightings>([
  [
    KEY,
    {
      finalizer: 1_350,
      status1: 1_770,
      owned: { secret: 1_500, service: 1_510, configMap: 1_520, statefulSet: 1_530 },
    },
  ],
]);
const phase = {
  generation: 1 as const,
  sentAt: new Map([[KEY, sent]]),
  convergedAt: new Map([[KEY, 1_770]]),
  endsAt: 5_000,
};

describe('the per-object breakdown', () => {
  const stages = stagesOf(phase, records, seen);
  const one = (prefix: string) =>
    [...stages].find(([stage]) => stage.startsWith(prefix))?.[1] ?? [];

  it('times each stage from the first event, the first reconcile and the driver sightings', () => {
    assert.deepEqual(one('1 watch'), [100]);
    assert.deepEqual(one('2 publish'), [3]);
    assert.deepEqual(one('3 queue'), [200]);
    assert.deepEqual(one('4a'), [47]);
    assert.deepEqual(one('4e'), [227]);
    assert.deepEqual(one('5 first'), [397]);
    assert.deepEqual(one('total'), [770]);
  });

  it('pairs the status writer run that ends after the reconcile started, even if it started first', () => {
    assert.deepEqual(one('6 intent'), [-5]);
    assert.deepEqual(one('7 status write'), [65]);
    assert.deepEqual(one('8 status seen'), [10]);
  });

  it('measures no intent queue for a status written inside the reconcile (one process)', () => {
    const inside = {
      ...records,
      outcomes: records.outcomes.map((o) =>
        o.controller === 'databasecluster.status-writer' && o.result !== 'skipped'
          ? { ...o, startedAt: 1_600, endedAt: 1_690 }
          : o,
      ),
    };
    const stages = stagesOf(phase, inside, seen);
    assert.equal(stages.get('6 intent queue: reconcile end → status writer starts'), undefined);
    assert.deepEqual(stages.get('7 status write: writer start → end'), [90]);
    assert.deepEqual(
      stages.get('first status written inside the reconcile (in process), per object (count)'),
      [1],
    );
    assert.deepEqual(
      one('first status written inside the reconcile'),
      [0],
      'from the bus: not inside the reconcile',
    );
  });

  it('counts the reconciles and the writer runs of the phase only, and those that wrote nothing', () => {
    assert.deepEqual(one('reconciles per object'), [2]);
    assert.deepEqual(one('5b every other'), [20]);
    assert.deepEqual(one('worker time per object'), [397 + 20]);
    assert.deepEqual(one('status-writer runs per object'), [2]);
    assert.deepEqual(one('status-writer runs that wrote nothing'), [1]);
  });

  it('leaves out an object whose record is missing instead of inventing a time', () => {
    const none = stagesOf(
      { ...phase, sentAt: new Map([['bench-b/db-00001', sent]]) },
      records,
      new Map(),
    );
    assert.equal(none.get('1 watch: sent → watcher has the event'), undefined);
    assert.deepEqual(none.get('reconciles per object (count)'), [0]);
  });

  it('puts each duration in one histogram bucket', () => {
    const table = formatStages(new Map([['x', [5, 50, 50, 20_000]]]));
    const row = table.split('\n').find((line) => line.startsWith('| x |')) ?? '';
    // n, p50, p90, p99, max, then <10ms <30ms <100ms <300ms <1s <3s <10s ≥10s
    assert.equal(row, '| x | 4 | 50 | 20000 | 20000 | 20000 | 1 | 0 | 2 | 0 | 0 | 0 | 0 | 1 |');
  });
});
