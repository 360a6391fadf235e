import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ObservedState } from './observed-state.js';
import { defineOperator, defineResource } from '@kubebus/shared/definition';
import { z } from 'zod';
import { PerturbationSetupError, perturbationTest, plannedSchedules } from './perturbation-test.js';
import type { Reference } from './reference-run.js';
import { formatSchedule } from './schedule.js';
import type { Workload } from './workload.js';

const apply = (spec: number) => ({ action: 'apply' as const, spec, why: `spec ${spec}` });
const remove = { action: 'delete' as const, why: 'delete' };
const workload: Workload = {
  name: 'sample',
  specs: [0, 1, 2],
  steps: [apply(0), apply(1), apply(0), remove, apply(1)],
  fixtures: [],
};

function state(owned: Record<string, unknown>, status?: object): ObservedState {
  return {
    primary: status === undefined ? null : { spec: {}, finalizers: [], status, deleting: false },
    generations: null,
    owned,
    events: {},
  };
}

const reference: Reference = {
  seconds: 1,
  steps: workload.steps.map((step, index) => ({
    step: index,
    why: step.why,
    seconds: 1,
    writes: index === 3 ? 0 : 2,
    maxWritesPerReconcile: index === 3 ? 0 : 1,
    reconciles: [],
  })),
  states: [
    state({ 'ConfigMap/sample-journal': ['a'], 'ConfigMap/sample-page': 'x' }, { length: 1 }),
    state({ 'ConfigMap/sample-journal': ['a', 'b'], 'ConfigMap/sample-page': 'x' }, {}),
    state({ 'ConfigMap/sample-journal': ['a', 'b', 'c'], 'ConfigMap/sample-page': 'x' }, { n: 3 }),
    state({}),
    state({ 'ConfigMap/sample-journal': ['b'] }, { length: 1 }),
  ],
};

test('stale schedules: owned objects the step before changed, in steps that keep the object', () => {
  const stale = plannedSchedules(workload, reference, ['stale']).map(formatSchedule);
  assert.deepEqual(stale, [
    // step 0 made both; step 1 changed only the journal; step 3 deletes, step 4 follows a delete
    'stale:s1:ConfigMap/sample-journal',
    'stale:s1:ConfigMap/sample-page',
    'stale:s2:ConfigMap/sample-journal',
  ]);
});

test('status-restart schedules: one per step that keeps the object and whose reference wrote a status', () => {
  const restarts = plannedSchedules(workload, reference, ['status-restart']).map(formatSchedule);
  // step 1's status is empty (nothing written), step 3 deletes
  assert.deepEqual(restarts, ['status-restart:s0', 'status-restart:s2', 'status-restart:s4']);
});

test('handover schedules: as the intermediate ones, one per k up to the most writes a reconcile of the step made', () => {
  const handovers = plannedSchedules(workload, reference, ['handover']).map(formatSchedule);
  assert.deepEqual(handovers, [
    'handover:s0:k1',
    'handover:s1:k1',
    'handover:s2:k1',
    'handover:s4:k1',
  ]);
});

test('lagging schedules: every step whose reconciles wrote something, the primary taken back in changes', () => {
  const lagging = plannedSchedules(workload, reference, ['lagging']).map(formatSchedule);
  // step 3 (the delete) made no write in this reference; step 4 follows a delete
  assert.deepEqual(lagging, [
    'lagging:s0',
    'lagging:s1',
    'lagging:s1:primary',
    'lagging:s2',
    'lagging:s2:primary',
    'lagging:s4',
  ]);
});

test('the kinds alternate, and only those asked for are planned', () => {
  const all = plannedSchedules(workload, reference).map(formatSchedule);
  assert.deepEqual(all.slice(0, 8), [
    'intermediate:s0:k1',
    'unobserved:s0-s1',
    'stale:s1:ConfigMap/sample-journal',
    'status-restart:s0',
    'handover:s0:k1',
    'lagging:s0',
    'overlap:s0:k1',
    'intermediate:s1:k1',
  ]);
  const two = plannedSchedules(workload, reference, ['intermediate', 'unobserved']);
  assert.ok(two.every((s) => s.kind === 'intermediate' || s.kind === 'unobserved'));
  assert.equal(two.length, all.length - 3 - 3 - 4 - 6 - 3);
});

test("a fixture's change: stale and status-restart where the object is kept and its status moved", () => {
  const rotated = {
    action: 'fixture' as const,
    why: 'change Secret/db-password to its revision 2',
    fixture: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password' } },
  };
  const withFixture: Workload = {
    ...workload,
    steps: [apply(0), apply(1), rotated, rotated, remove],
  };
  const page = { 'ConfigMap/sample-page': 'x' };
  const planned = plannedSchedules(
    withFixture,
    {
      seconds: 1,
      steps: withFixture.steps.map((step, index) => ({
        step: index,
        why: step.why,
        seconds: 1,
        writes: 1,
        maxWritesPerReconcile: 1,
        reconciles: [],
      })),
      states: [
        state(page, { fingerprint: 'a' }),
        state({ 'ConfigMap/sample-page': 'y' }, { fingerprint: 'a' }),
        // the first change moved the status, the second (the same revision again) did not
        state({ 'ConfigMap/sample-page': 'y' }, { fingerprint: 'b' }),
        state({ 'ConfigMap/sample-page': 'y' }, { fingerprint: 'b' }),
        state({}),
      ],
    },
    ['stale', 'status-restart'],
  ).map(formatSchedule);
  assert.deepEqual(planned.sort(), [
    // step 0 made the page and step 1 changed it; nothing changed it in step 2 for step 3
    'stale:s1:ConfigMap/sample-page',
    'stale:s2:ConfigMap/sample-page',
    'status-restart:s0',
    'status-restart:s1',
    'status-restart:s2',
  ]);
});

test('overlap schedules: after each write of a step that keeps the object, when the next step changes or deletes it', () => {
  const overlap = plannedSchedules(workload, reference, ['overlap']).map(formatSchedule);
  // steps 0..4 are apply 0, apply 1, apply 0, delete, apply 1: step 2's next is the delete,
  // step 3 deletes (nothing to change under it), step 4 is the last
  assert.deepEqual(overlap, ['overlap:s0:k1', 'overlap:s1:k1', 'overlap:s2:k1']);
});

test('status-restart asked for with the writer in the reconciler’s process is refused before any server starts', async () => {
  const Thing = defineResource({
    group: 'test.kubebus.dev',
    version: 'v1',
    kind: 'Thing',
    scope: 'Namespaced',
    spec: z.object({}),
    status: z.object({}),
  });
  const operator = defineOperator({
    name: 'things',
    for: Thing,
    reconcile: () => Promise.resolve(undefined),
  });
  for (const options of [
    { layout: 'one' as const, kinds: ['status-restart' as const] },
    { layout: 'one' as const, replay: 'status-restart:s0' },
  ])
    await assert.rejects(
      perturbationTest(operator, options),
      (error: unknown) =>
        error instanceof PerturbationSetupError && /use --layout three/.test(error.message),
    );
});
