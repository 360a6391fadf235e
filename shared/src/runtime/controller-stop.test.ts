// Stopping with a reconcile that never returns on its own (kubebus test parks
// a crashed one so): stop aborts its signal, the reconcile rejects, and the
// request goes back to the transport with nothing acted on — no retry with
// backoff, no outcome (so no status), no dead letter.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '../obs/logger.js';
import { AbandonedReconcile } from './abandoned.js';
import { Controller } from './controller.js';
import { runtimeMetrics } from './metrics.js';
import { reconcilerFunc } from './reconciler.js';
import type { WorkItem } from './work-item.js';

/** What every controller here is made with; each test adds what it watches. */
const testOptions = () => ({
  name: 'test',
  maxConcurrent: 4,
  retry: { baseMs: 1, capMs: 1, maxAttempts: 1 },
  heartbeatMs: 1_000,
  metrics: runtimeMetrics(new Registry()),
  log: silent,
});

const silent = createLogger({
  service: 'test',
  destination: new Writable({
    write: (_chunk, _enc, done) => {
      done();
    },
  }),
});

it('stop ends a parked reconcile and hands its request back without acting on it', async () => {
  const fates: string[] = [];
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const outcomes: unknown[] = [];
  const deadLetters: unknown[] = [];
  const controller = new Controller(
    reconcilerFunc((_request, { signal }) => {
      started();
      return new Promise((_, reject) => {
        signal.addEventListener('abort', () => {
          reject(new Error('abandoned'));
        });
      });
    }),
    {
      ...testOptions(),
      onDeadLetter: (letter) => {
        deadLetters.push(letter);
        return Promise.resolve();
      },
      onOutcome: (outcome) => outcomes.push(outcome),
    },
  );
  const item: WorkItem = {
    key: { group: 'g', resource: 'r', namespace: 'ns', name: 'o' },
    enqueuedAt: Date.now(),
    ack: () => fates.push('ack'),
    retry: (delayMs) => fates.push(`retry:${delayMs}`),
    terminate: (reason) => fates.push(`term:${reason}`),
    inProgress: () => undefined,
  };
  controller.dispatch(item);
  await running;
  await controller.stop();
  assert.deepEqual(fates, ['retry:0'], 'handed back at once, as on any stop');
  assert.deepEqual(outcomes, []);
  assert.deepEqual(deadLetters, []);
  assert.ok(controller.idle);
});

it('an abandoned reconcile is handed back uncounted, as an aborted one', async () => {
  const fates: string[] = [];
  const outcomes: unknown[] = [];
  const controller = new Controller(
    reconcilerFunc(() => Promise.reject(new AbandonedReconcile('its process is gone'))),
    {
      ...testOptions(),
      onDeadLetter: () => Promise.resolve(),
      onOutcome: (outcome) => outcomes.push(outcome),
    },
  );
  controller.dispatch({
    key: { group: 'g', resource: 'r', namespace: 'ns', name: 'o' },
    enqueuedAt: Date.now(),
    ack: () => fates.push('ack'),
    retry: (delayMs) => fates.push(`retry:${delayMs}`),
    terminate: (reason) => fates.push(`term:${reason}`),
    inProgress: () => undefined,
  });
  await controller.drain();
  assert.deepEqual(fates, ['retry:0'], 'not a failure: no backoff, no dead letter at attempt 1');
  assert.deepEqual(outcomes, [], 'no outcome, so no status');
  await controller.stop();
});

it('a drain lets running reconciles end, then aborts those that go on, then gives up on those that ignore it', async () => {
  let honouring!: () => void;
  let ignoring!: () => void;
  const started = {
    honouring: new Promise<void>((resolve) => (honouring = resolve)),
    ignoring: new Promise<void>((resolve) => (ignoring = resolve)),
  };
  const aborted: string[] = [];
  const controller = new Controller(
    reconcilerFunc((request, { signal }) => {
      const name = request.key.name;
      signal.addEventListener('abort', () => aborted.push(name));
      if (name === 'honouring') {
        honouring();
        // a call that takes the signal (a fetch given ctx.signal) ends with it
        return new Promise((_, reject) => {
          signal.addEventListener('abort', () => {
            reject(new Error('aborted'));
          });
        });
      }
      ignoring();
      // a call that does not take it: never ends
      return new Promise(() => undefined);
    }),
    {
      ...testOptions(),
      onDeadLetter: () => Promise.resolve(),
    },
  );
  const itemOf = (name: string): WorkItem => ({
    key: { group: 'g', resource: 'r', namespace: 'ns', name },
    enqueuedAt: Date.now(),
    ack: () => undefined,
    retry: () => undefined,
    terminate: () => undefined,
    inProgress: () => undefined,
  });
  controller.dispatch(itemOf('honouring'));
  await started.honouring;
  // only the honouring one drained: aborted after its grace, and ended by it
  await controller.drain((key) => key.name === 'honouring', {
    abortAfterMs: 20,
    giveUpAfterMs: 60_000,
  });
  assert.deepEqual(aborted, ['honouring']);
  controller.dispatch(itemOf('ignoring'));
  await started.ignoring;
  // one that ignores its signal does not hold the drain for ever
  await controller.drain(undefined, { abortAfterMs: 20, giveUpAfterMs: 20 });
  assert.deepEqual(aborted, ['honouring', 'ignoring']);
});
