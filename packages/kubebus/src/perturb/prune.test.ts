import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ObservedState } from './observed-state.js';
import { pruneSchedules, whyPruned } from './prune.js';
import type { Reference } from './reference-run.js';
import type { ReconcileSummary } from './report.js';
import { parseSchedule, type Schedule } from './schedule.js';

function schedule(text: string): Schedule {
  const parsed = parseSchedule(text);
  assert.ok(!('error' in parsed), text);
  return parsed;
}

const saw = (generation: number, rv: number, deleting = false) =>
  `generation ${generation}, resourceVersion ${rv}${deleting ? ', being deleted' : ''}`;

function reconcile(
  seen: string,
  wrote: string[] = [],
  read: string[] = [],
  call: ReconcileSummary['call'] = 'reconcile',
): ReconcileSummary {
  return { call, attempt: 1, saw: seen, read, wrote, outcome: 'ok' };
}

function state(owned: Record<string, unknown>, events: Record<string, number> = {}): ObservedState {
  return { primary: null, generations: null, owned, events };
}

/**
 * As checkpointed.ts records it: each change read the checkpoint, then wrote
 * page and checkpoint; the owned events' reconcile saw the same revision
 * (the status not yet recorded) and wrote nothing; the status' own
 * reconcile saw the next one.
 */
const checkpointed: Pick<Reference, 'steps' | 'states'> = {
  steps: [
    [
      reconcile(
        saw(1, 100),
        ['apply ConfigMap sample-page', 'apply ConfigMap sample-checkpoint'],
        ['get ConfigMap sample-checkpoint'],
      ),
      reconcile(saw(1, 100), [], ['get ConfigMap sample-checkpoint']),
      reconcile(saw(1, 104), [], ['get ConfigMap sample-checkpoint']),
    ],
    // a change whose first reconcile wrote only the page; a later one wrote the checkpoint
    [
      reconcile(saw(2, 110), ['apply ConfigMap sample-page'], ['get ConfigMap sample-checkpoint']),
      reconcile(saw(2, 113), ['apply ConfigMap sample-checkpoint'], []),
    ],
    // a delete: nothing reconciled, the garbage collector took what it made
    [],
    // a step whose reconcile saw nothing new (a late one of the deleted object's revision)
    [reconcile(saw(2, 113))],
  ].map((reconciles, step) => ({
    step,
    why: `step ${step}`,
    seconds: 1,
    writes: reconciles.reduce((sum, r) => sum + r.wrote.length, 0),
    maxWritesPerReconcile: Math.max(0, ...reconciles.map((r) => r.wrote.length)),
    reconciles,
  })),
  states: [
    state({ 'ConfigMap/sample-page': 'a', 'ConfigMap/sample-checkpoint': '1' }),
    state({ 'ConfigMap/sample-page': 'b', 'ConfigMap/sample-checkpoint': '2' }),
    state({}),
    state({}),
  ],
};

test("intermediate: a crash after the reconcile's last write, whose next reconcile saw the same revision, is pruned", () => {
  assert.equal(
    whyPruned(schedule('intermediate:s0:k1'), checkpointed),
    undefined,
    'between two writes',
  );
  assert.match(
    whyPruned(schedule('intermediate:s0:k2'), checkpointed) ?? '',
    /write 2 is the reconcile's last, and the next reconcile saw the same revision after it \(generation 1, resourceVersion 100\)/,
  );
});

test('intermediate: the last write is kept when no later reconcile saw that revision', () => {
  // step 1's next reconcile saw the status' revision: the redelivery would see an older primary
  assert.equal(whyPruned(schedule('intermediate:s1:k1'), checkpointed), undefined);
});

test("intermediate: past the first reconcile's writes is never reached", () => {
  assert.match(
    whyPruned(schedule('intermediate:s0:k3'), checkpointed) ?? '',
    /first reconcile made 2 writes: a stop after write 3 is never reached/,
  );
});

test("handover: past the first reconcile's writes is never reached; after its last it is kept (the zombie's status intent is still to come)", () => {
  assert.match(
    whyPruned(schedule('handover:s0:k3'), checkpointed) ?? '',
    /first reconcile made 2 writes: a stop after write 3 is never reached/,
  );
  assert.equal(whyPruned(schedule('handover:s0:k2'), checkpointed), undefined);
});

test('status-restart schedules are never pruned: the restarted writer takes an intent the reference wrote at once', () => {
  assert.equal(whyPruned(schedule('status-restart:s0'), checkpointed), undefined);
});

test('unobserved: hiding a step the reference saw nothing of is pruned, one it saw is not', () => {
  assert.equal(whyPruned(schedule('unobserved:s0-s1'), checkpointed), undefined);
  assert.equal(
    whyPruned(schedule('unobserved:s1-s2'), checkpointed),
    undefined,
    'step 1 reconciled',
  );
  // step 2 reconciled nothing, but the garbage collector changed what the operator made
  assert.equal(whyPruned(schedule('unobserved:s2-s3'), checkpointed), undefined);
  // step 3 saw only a revision seen before, and nothing changed: its view is the reference's
  const empty = { step: 4, why: 'step 4', seconds: 1, writes: 0, maxWritesPerReconcile: 0 };
  const longer = {
    steps: [...checkpointed.steps, { ...empty, reconciles: [] }],
    states: [...checkpointed.states, state({})],
  };
  assert.match(
    whyPruned(schedule('unobserved:s3-s4'), longer) ?? '',
    /no reconcile of step 3 saw a new revision/,
  );
});

test("unobserved: a hidden step that moved only the object's status (a fixture's change) is not pruned", () => {
  const withStatus = (fingerprint: string): ObservedState => ({
    primary: { spec: {}, finalizers: [], status: { fingerprint }, deleting: false },
    generations: { generation: 2, observed: 2 },
    owned: {},
    events: {},
  });
  const steps = [[reconcile(saw(2, 120))], [reconcile(saw(2, 120))], []].map(
    (reconciles, step) => ({
      step,
      why: `step ${step}`,
      seconds: 1,
      writes: 0,
      maxWritesPerReconcile: 0,
      reconciles,
    }),
  );
  // step 1's reconcile saw the object's revision step 0 saw; only its status moved
  const rotated = { steps, states: [withStatus('a'), withStatus('b'), withStatus('b')] };
  assert.equal(whyPruned(schedule('unobserved:s1-s2'), rotated), undefined);
  const unchanged = { steps, states: [withStatus('a'), withStatus('a'), withStatus('a')] };
  assert.match(whyPruned(schedule('unobserved:s1-s2'), unchanged) ?? '', /no reconcile of step 1/);
});

test('stale: a target the step never reads, writes or lists is pruned', () => {
  const reads = {
    ...checkpointed,
    steps: checkpointed.steps.map((step) =>
      step.step === 1
        ? { ...step, reconciles: [reconcile(saw(2, 110), [], ['get ConfigMap sample-checkpoint'])] }
        : step,
    ),
  };
  // read by name in step 1
  assert.equal(whyPruned(schedule('stale:s1:ConfigMap/sample-checkpoint'), reads), undefined);
  // written in step 0 and not in step 1: the runtime's pruning reads it
  assert.equal(whyPruned(schedule('stale:s1:ConfigMap/sample-page'), reads), undefined);
  // changed by someone else in step 0 (never written by the operator), never read in step 1
  assert.match(
    whyPruned(schedule('stale:s1:Deployment/web'), reads) ?? '',
    /no reconcile of step 1 read or wrote Deployment\/web, nor listed Deployments/,
  );
  // a list of its kind reads it
  const listed = {
    ...reads,
    steps: reads.steps.map((step) =>
      step.step === 1
        ? { ...step, reconciles: [reconcile(saw(2, 110), [], ['list Deployment'])] }
        : step,
    ),
  };
  assert.equal(whyPruned(schedule('stale:s1:Deployment/web'), listed), undefined);
});

test('lagging schedules are never pruned: the requeue reads a bus the reference never had', () => {
  assert.equal(whyPruned(schedule('lagging:s0'), checkpointed), undefined);
});

test('the pruned are reported with why, the rest kept in order', () => {
  const { kept, pruned } = pruneSchedules(
    ['intermediate:s0:k1', 'intermediate:s0:k2', 'lagging:s0', 'intermediate:s0:k3'].map(schedule),
    checkpointed,
  );
  assert.deepEqual(
    kept.map((s) => s.kind),
    ['intermediate', 'lagging'],
  );
  assert.deepEqual(
    pruned.map((p) => p.schedule),
    ['intermediate:s0:k2', 'intermediate:s0:k3'],
  );
  assert.ok(pruned.every((p) => p.why.length > 0 && !p.why.includes('\n')));
});
