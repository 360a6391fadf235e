import type { KubeObject } from '@kubebus/shared/events';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  changedStatusFields,
  LOOP_ROUNDS,
  loopNote,
  readStamp,
  roundInputs,
  StatusLoops,
} from './status-loop.js';

const condition = (reason: string, lastTransitionTime: string) => ({
  type: 'Ready',
  status: 'True',
  reason,
  message: '',
  observedGeneration: 3,
  lastTransitionTime,
});

function written(status: Record<string, unknown>, generation = 3): KubeObject {
  return {
    apiVersion: 'x.dev/v1',
    kind: 'Probe',
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', resourceVersion: '1', generation },
    status: { observedGeneration: 3, ...status },
  };
}

const SAME = roundInputs(written({}), new Set(['ConfigMap/ns/p@7']));

test('the fields named are those written differently, a condition by what it says', () => {
  assert.deepEqual(
    changedStatusFields(
      { checks: 1, phase: 'Ready', observedGeneration: 2, conditions: [condition('Up', 't1')] },
      { checks: 2, phase: 'Ready', conditions: [condition('Up', 't2')] },
    ),
    ['status.checks'],
  );
  assert.deepEqual(
    changedStatusFields(
      { conditions: [condition('Up', 't1')] },
      { conditions: [condition('Down', 't1')], added: true },
    ),
    ['status.added', 'status.conditions[Ready]'],
  );
  // the same map in another key order (the apiserver sorts, the schema does not)
  assert.deepEqual(
    changedStatusFields(
      { endpoint: { port: 5432, host: 'db' } },
      { endpoint: { host: 'db', port: 5432 } },
    ),
    [],
  );
});

test('a status changing at every round its own write started is said once, at the tenth', () => {
  const loops = new StatusLoops();
  const said: (string[] | undefined)[] = [];
  for (let round = 1; round <= LOOP_ROUNDS * 3; round++)
    said.push(loops.observe(written({ checks: round }), { checks: round + 1 }, true, () => SAME));
  assert.deepEqual(said[LOOP_ROUNDS - 1], ['status.checks']);
  assert.equal(said.filter((s) => s !== undefined).length, 1);
});

test('rounds that converge, follow a new generation or were started by something else are no loop', () => {
  const loops = new StatusLoops();
  for (let round = 1; round <= LOOP_ROUNDS * 2; round++) {
    // a child's change, a requeue or a resync: the status may change each time
    assert.equal(
      loops.observe(written({ checks: round }), { checks: round + 1 }, false, () => SAME),
      undefined,
    );
    // a spec change: the status follows the new generation once
    assert.equal(
      loops.observe(written({ checks: round }, 4), { checks: round + 1 }, true, () => SAME),
      undefined,
    );
  }
  // nine rounds in a row, then one that writes nothing new: the count starts again
  for (let round = 1; round < LOOP_ROUNDS; round++)
    assert.equal(
      loops.observe(written({ checks: round }), { checks: round + 1 }, true, () => SAME),
      undefined,
    );
  assert.equal(
    loops.observe(written({ checks: 9 }), { checks: 9 }, true, () => SAME),
    undefined,
  );
  for (let round = 1; round < LOOP_ROUNDS; round++)
    assert.equal(
      loops.observe(written({ checks: round }), { checks: round + 1 }, true, () => SAME),
      undefined,
    );
});

test('rounds whose inputs changed, or that failed in between, are not in a row', () => {
  const loops = new StatusLoops();
  // a child's change folded into the status write's mark: what the round read moved
  for (let round = 1; round <= LOOP_ROUNDS * 2; round++) {
    const inputs = roundInputs(written({}), new Set([`Deployment/ns/p@${String(round)}`]));
    assert.equal(
      loops.observe(written({ ready: round }), { ready: round + 1 }, true, () => inputs),
      undefined,
    );
  }
  // nine in a row, a failed round, nine more: never ten
  const uid = written({}).metadata.uid;
  for (let round = 1; round < LOOP_ROUNDS; round++)
    assert.equal(
      loops.observe(written({ checks: round }), { checks: round + 1 }, true, () => SAME),
      undefined,
    );
  // a round that began and never ended (it failed), then the next begins
  loops.begun(uid);
  loops.begun(uid);
  for (let round = 1; round < LOOP_ROUNDS; round++)
    assert.equal(
      loops.observe(written({ checks: round }), { checks: round + 1 }, true, () => SAME),
      undefined,
    );
  // the object's labels are an input too
  const relabelled = (n: number) =>
    roundInputs(
      { ...written({}), metadata: { ...written({}).metadata, labels: { n: String(n) } } },
      new Set(),
    );
  const other = new StatusLoops();
  for (let round = 1; round <= LOOP_ROUNDS * 2; round++)
    assert.equal(
      other.observe(written({ checks: round }), { checks: round + 1 }, true, () =>
        relabelled(round),
      ),
      undefined,
    );
});

test('the object read again through ctx is an input by its spec and metadata, another by resourceVersion', () => {
  const owner = written({ checks: 1 });
  const again = {
    ...written({ checks: 2 }),
    metadata: { ...owner.metadata, resourceVersion: '9' },
  };
  // its own status write moved its resourceVersion: the same input
  assert.equal(readStamp(owner, owner), readStamp(owner, again));
  const relabelled = { ...again, metadata: { ...again.metadata, labels: { tier: 'gold' } } };
  assert.notEqual(readStamp(owner, owner), readStamp(owner, relabelled));
  const child = (resourceVersion: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'ns', uid: 'c1', resourceVersion },
  });
  assert.notEqual(readStamp(owner, child('1')), readStamp(owner, child('2')));
});

test('the note names the fields and what to do', () => {
  assert.match(
    loopNote(['status.lastChecked']),
    /^status\.lastChecked changed at each of 10 reconciles in a row .*\(the time of the last change, not of the last check/,
  );
});
