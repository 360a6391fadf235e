import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hold, reach, settle, timingOf, type Watch } from './convergence.js';
import type { ObservedState } from './observed-state.js';
import { placeOf } from './place.js';
import type { Activity } from './recording-operator.js';
import type { Step } from './workload.js';

function state(replicas: number): ObservedState {
  return {
    primary: {
      spec: { replicas },
      finalizers: [],
      status: { observedGeneration: 1, conditions: [{ type: 'Ready' }] },
      deleting: false,
    },
    generations: { generation: 1, observed: 1 },
    owned: { 'ConfigMap/page': { replicas } },
    events: {},
  };
}

/** A watch over a state and an activity the test changes as it goes. */
function watchOver(now: { state: ObservedState; activity: Activity }, quietMs: number): Watch {
  return {
    driver: { observe: () => Promise.resolve(now.state) },
    place: placeOf({ scope: 'Namespaced' }, 'ns', 'sample'),
    timing: { quietMs, reachWithinMs: 5_000 },
    activity: () => now.activity,
  };
}

const step: Step = { action: 'apply', why: 'created', spec: { replicas: 1 } };

test('the quiet window is longer than the backoff cap, so a pending retry lands inside it', () => {
  const timing = timingOf(2_000);
  assert.ok(timing.quietMs > 2_000, String(timing.quietMs));
  assert.equal(timing.reachWithinMs, 60_000);
  assert.equal(timingOf(2_000, 90_000).reachWithinMs, 90_000);
});

test('settle waits while a reconcile runs, and takes the state its retry leaves', async () => {
  const now = { state: state(1), activity: { started: 1, running: 1 } };
  const started = Date.now();
  // the running reconcile errs; its retry, later, changes the state
  const retried = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    now.activity = { started: 1, running: 0 };
    await new Promise((resolve) => setTimeout(resolve, 250));
    now.activity = { started: 2, running: 1 };
    now.state = state(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    now.activity = { started: 2, running: 0 };
  })();
  const settled = await settle(watchOver(now, 400), step);
  await retried;
  assert.deepEqual(settled, state(2), 'the state after the retry');
  assert.ok(Date.now() - started >= 650 + 400, 'quiet for the window after the last reconcile');
});

test("settle on a fixture's change waits for a reconcile that starts after it, not only for quiet", async () => {
  const now = { state: state(1), activity: { started: 4, running: 0 } };
  const fixture: Step = {
    action: 'fixture',
    why: 'change Secret/db-password to its revision 2',
    fixture: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password' } },
  };
  const started = Date.now();
  // the watch brings the change late, after a whole quiet window; its reconcile changes the state
  const reconciled = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 700));
    now.activity = { started: 5, running: 1 };
    now.state = state(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    now.activity = { started: 5, running: 0 };
  })();
  const settled = await settle(watchOver(now, 300), fixture, 4);
  await reconciled;
  assert.deepEqual(settled, state(2), "the state the change's reconcile left");
  assert.ok(Date.now() - started >= 800 + 300);
});

test('hold lasts until the reconciles are quiet, and reports a change a late reconcile makes', async () => {
  const now = { state: state(1), activity: { started: 3, running: 1 } };
  const late = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    now.state = state(3);
  })();
  const changed = await hold(watchOver(now, 300), state(1));
  await late;
  assert.ok(changed.length > 0, 'the late write is seen');

  const quiet = { state: state(1), activity: { started: 3, running: 0 } };
  const began = Date.now();
  assert.deepEqual(await hold(watchOver(quiet, 300), state(1)), []);
  assert.ok(Date.now() - began >= 300);
});

test('hold gives up with a line when the reconciles never stop', async () => {
  let started = 0;
  const watch: Watch = {
    ...watchOver({ state: state(1), activity: { started: 0, running: 0 } }, 300),
    timing: { quietMs: 300, reachWithinMs: 800 },
    activity: () => ({ started: started++, running: 0 }),
  };
  const lines = await hold(watch, state(1));
  assert.match(lines[0] ?? '', /did not stop within 0.8 s/);
});

test('reach waits out the unfinished state, and fails at once on a side effect repeated when the rest converged', async () => {
  const charged = (times: number): ObservedState => ({ ...state(2), effects: { charge: times } });
  const expected = charged(1);
  // slow to finish, repeated on the way: the verdict waits for the rest, so it names only the call
  const now: { state: ObservedState; activity: Activity } = {
    state: { ...state(1), effects: { charge: 2 } },
    activity: { started: 2, running: 1 },
  };
  const finished = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 600));
    now.state = charged(2);
  })();
  const began = Date.now();
  const verdict = await reach(watchOver(now, 300), expected);
  await finished;
  assert.deepEqual(verdict, {
    ok: false,
    state: charged(2),
    differences: ['Effect charge: 1 in the reference, 2 here'],
  });
  assert.ok(Date.now() - began < 5_000, 'no waiting for the deadline on what never goes away');

  // one charge fewer than the reference may still come: that is waited for
  const owed = { state: charged(0), activity: { started: 2, running: 0 } };
  setTimeout(() => {
    owed.state = charged(1);
  }, 400);
  assert.deepEqual(await reach(watchOver(owed, 300), expected), { ok: true, state: charged(1) });
});
