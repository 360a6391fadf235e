import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StatusIntent } from '@kubebus/shared/bus';
import { isAbandonedReconcile } from '@kubebus/shared/runtime';
import { StatusHold } from './status-hold.js';

const intent = (namespace: string, observedGeneration: number): StatusIntent => ({
  key: { group: 'example.kubebus.dev', resource: 'samples', namespace, name: 'sample' },
  apiVersion: 'example.kubebus.dev/v1',
  kind: 'Sample',
  uid: 'u1',
  observedGeneration,
  status: {},
  time: '2026-12-02T00:00:00Z',
});

/** How a hold-point call came out, without waiting for one that never settles. */
async function outcomeOf(call: Promise<void>): Promise<'passed' | 'parked' | Error> {
  const parked = Symbol('parked');
  const result = await Promise.race([
    call.then(
      () => 'passed' as const,
      (error: unknown) => error as Error,
    ),
    new Promise<typeof parked>((resolve) => setImmediate(() => resolve(parked))),
  ]);
  return result === parked ? 'parked' : result;
}

test('unarmed, or for another object or an older intent, the writer goes on', async () => {
  const hold = new StatusHold();
  const taken = hold.incarnation();
  const signal = new AbortController().signal;
  assert.equal(await outcomeOf(taken(intent('kbt-0', 1), signal)), 'passed');
  const armed = hold.arm({ key: 'kbt-0', matches: (i) => i.observedGeneration > 1 });
  assert.equal(await outcomeOf(taken(intent('kbt-1', 2), signal)), 'passed');
  assert.equal(await outcomeOf(taken(intent('kbt-0', 1), signal)), 'passed');
  hold.disarm();
  assert.equal(await armed, 'unreached');
});

test('the armed intent is held, and the writer that took it is dead until abandoned', async () => {
  const hold = new StatusHold();
  const dead = hold.incarnation();
  const signal = new AbortController().signal;
  const armed = hold.arm({ key: 'kbt-0', matches: (i) => i.observedGeneration === 2 });
  const first = dead(intent('kbt-0', 2), signal);
  assert.equal(await armed, 'held');
  assert.equal(await outcomeOf(first), 'parked');
  // the dead writer writes nothing more, for any object
  const other = dead(intent('kbt-1', 1), signal);
  assert.equal(await outcomeOf(other), 'parked');
  hold.abandon();
  for (const call of [first, other]) {
    const outcome = await outcomeOf(call);
    assert.ok(outcome instanceof Error && isAbandonedReconcile(outcome), String(outcome));
  }
  // handed to the dead writer again while it stops: ends at once
  const late = await outcomeOf(dead(intent('kbt-0', 2), signal));
  assert.ok(late instanceof Error && isAbandonedReconcile(late));
  // the next writer is handed the intent and writes it
  const next = hold.incarnation();
  assert.equal(await outcomeOf(next(intent('kbt-0', 2), signal)), 'passed');
});

test("a held intent ends with the writer's own signal", async () => {
  const hold = new StatusHold();
  const taken = hold.incarnation();
  const abort = new AbortController();
  void hold.arm({ key: 'kbt-0', matches: () => true });
  const call = taken(intent('kbt-0', 1), abort.signal);
  abort.abort();
  const outcome = await outcomeOf(call);
  assert.ok(outcome instanceof Error && isAbandonedReconcile(outcome));
});
