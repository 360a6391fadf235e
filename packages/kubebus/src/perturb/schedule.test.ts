import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatSchedule, parseSchedule, type Schedule } from './schedule.js';

const schedules: fc.Arbitrary<Schedule> = fc.oneof(
  fc.record({
    kind: fc.constant('intermediate' as const),
    step: fc.nat(50),
    k: fc.integer({ min: 1, max: 50 }),
  }),
  fc
    .tuple(fc.nat(50), fc.nat(5))
    .map(([from, span]) => ({ kind: 'unobserved' as const, from, to: from + span })),
  fc.record({
    kind: fc.constant('stale' as const),
    step: fc.integer({ min: 1, max: 50 }),
    target: fc.constantFrom('ConfigMap/sample-page', 'Deployment/web', 'Secret/a.b-c'),
  }),
  fc.record({ kind: fc.constant('status-restart' as const), step: fc.nat(50) }),
  fc.record({
    kind: fc.constant('handover' as const),
    step: fc.nat(50),
    k: fc.integer({ min: 1, max: 50 }),
  }),
  fc.record({
    kind: fc.constant('overlap' as const),
    step: fc.nat(50),
    k: fc.integer({ min: 1, max: 50 }),
  }),
  fc.record({
    kind: fc.constant('lagging' as const),
    step: fc.nat(50),
    primary: fc.constant(false),
  }),
  fc.record({
    kind: fc.constant('lagging' as const),
    step: fc.integer({ min: 1, max: 50 }),
    primary: fc.constant(true),
  }),
);

test('a printed schedule parses back to itself', () => {
  fc.assert(
    fc.property(schedules, (schedule) => {
      assert.deepEqual(parseSchedule(formatSchedule(schedule)), { ...schedule });
    }),
    { seed: 3 },
  );
});

test('the strings the report prints', () => {
  assert.equal(formatSchedule({ kind: 'intermediate', step: 2, k: 3 }), 'intermediate:s2:k3');
  assert.equal(formatSchedule({ kind: 'unobserved', from: 4, to: 5 }), 'unobserved:s4-s5');
  assert.equal(
    formatSchedule({ kind: 'stale', step: 1, target: 'ConfigMap/sample-journal' }),
    'stale:s1:ConfigMap/sample-journal',
  );
  assert.equal(formatSchedule({ kind: 'status-restart', step: 2 }), 'status-restart:s2');
  assert.equal(formatSchedule({ kind: 'handover', step: 0, k: 1 }), 'handover:s0:k1');
  assert.equal(formatSchedule({ kind: 'overlap', step: 1, k: 2 }), 'overlap:s1:k2');
  assert.equal(formatSchedule({ kind: 'lagging', step: 1, primary: false }), 'lagging:s1');
  assert.equal(formatSchedule({ kind: 'lagging', step: 2, primary: true }), 'lagging:s2:primary');
});

test('what is not a schedule is refused with one line saying what one looks like', () => {
  for (const text of [
    'intermediate:s1',
    'crash:s1:k1',
    'intermediate:s1:k0',
    'unobserved:s3-s1',
    'stale:s0:ConfigMap/x',
    'stale:s1:ConfigMap',
    'stale:s1:ConfigMap/Upper',
    'status-restart:s',
    'status-restart:s1:k1',
    'handover:s1',
    'handover:s1:k0',
    'lagging:s1:k1',
    'lagging:s0:primary',
    'lagging:1',
    'overlap:s1',
    'overlap:s1:k0',
    '',
  ]) {
    const parsed = parseSchedule(text);
    assert.ok('error' in parsed, text);
    assert.doesNotMatch(parsed.error, /\n/);
  }
  const unknown = parseSchedule('crash:s1:k1');
  assert.ok('error' in unknown);
  assert.match(unknown.error, /intermediate:s1:k2, unobserved:s0-s1, stale:s1:ConfigMap\/name/);
  assert.match(unknown.error, /status-restart:s1, handover:s1:k2, lagging:s1 or overlap:s1:k2/);
});
