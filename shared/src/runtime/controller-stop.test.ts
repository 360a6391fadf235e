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
      name: 'test',
      maxConcurrent: 4,
      retry: { baseMs: 1, capMs: 1, maxAttempts: 1 },
      heartbeatMs: 1_000,
      metrics: runtimeMetrics(new Registry()),
      log: silent,
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
      name: 'test',
      maxConcurrent: 4,
      retry: { baseMs: 1, capMs: 1, maxAttempts: 1 },
      heartbeatMs: 1_000,
      metrics: runtimeMetrics(new Registry()),
      log: silent,
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
