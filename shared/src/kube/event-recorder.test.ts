import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { KubeObject } from '../events/kube-object.js';
import { KubeApiError } from './api-error.js';
import type { EventInput } from './apply.js';
import { EventRecorder, type EventDropReason, type PostEvent } from './event-recorder.js';

const cluster: KubeObject = {
  apiVersion: 'example.kubebus.dev/v1',
  kind: 'DatabaseCluster',
  metadata: { name: 'orders', namespace: 'team-a', uid: 'u1', resourceVersion: '7' },
};
const input: EventInput = {
  type: 'Normal',
  reason: 'BucketCreated',
  note: 'Created the backup bucket',
  action: 'Reconcile',
  reportingController: 'kubebus.dev/databasecluster',
  reportingInstance: 'r-1',
};
const log = pino({ level: 'silent' });
const quickRetry = { baseMs: 1, capMs: 2 };

/** A recorder whose sends the test settles by hand, and what it dropped. */
function recorderWith(
  post: PostEvent,
  options: { maxInFlight?: number; maxAttempts?: number } = {},
) {
  const dropped: EventDropReason[] = [];
  const recorder = new EventRecorder(post, {
    log,
    retry: quickRetry,
    ...options,
    onDropped: (reason) => dropped.push(reason),
  });
  return { recorder, dropped };
}

/** A send that stays open until the test settles it. */
function held() {
  const sends: { time: Date; settle: (error?: Error) => void }[] = [];
  const post: PostEvent = (_object, _input, time) =>
    new Promise<void>((resolve, reject) => {
      sends.push({ time, settle: (error) => (error === undefined ? resolve() : reject(error)) });
    });
  return { post, sends };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 1_000 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(condition(), 'condition not reached');
};

describe('EventRecorder', () => {
  it('returns before the Event is sent, which keeps the time it was recorded', async () => {
    const { post, sends } = held();
    const { recorder, dropped } = recorderWith(post);
    const before = Date.now();
    recorder.record(cluster, input);
    assert.equal(recorder.inFlight, 1, 'sent in the background, not yet answered');
    assert.equal(sends.length, 1, 'the send started at once');
    const recordedAt = sends[0]?.time.getTime() ?? 0;
    assert.ok(recordedAt >= before && recordedAt <= Date.now());
    sends[0]?.settle();
    await until(() => recorder.inFlight === 0);
    assert.deepEqual(dropped, []);
  });

  it('retries a transient failure with the same time, and drops the Event when its tries are spent', async () => {
    const times: number[] = [];
    let failures = 1;
    const flaky: PostEvent = (_object, _input, time) => {
      times.push(time.getTime());
      return failures-- > 0
        ? Promise.reject(new KubeApiError(429, 'TooManyRequests', 'throttled'))
        : Promise.resolve();
    };
    const first = recorderWith(flaky);
    first.recorder.record(cluster, input);
    await until(() => first.recorder.inFlight === 0);
    assert.equal(times.length, 2, 'one retry after the 429');
    assert.equal(times[0], times[1], 'the retry keeps the recorded time');
    assert.deepEqual(first.dropped, []);

    let sent = 0;
    const down: PostEvent = () => {
      sent++;
      return Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'down'));
    };
    const second = recorderWith(down, { maxAttempts: 3 });
    second.recorder.record(cluster, input);
    await until(() => second.recorder.inFlight === 0);
    assert.equal(sent, 3);
    assert.deepEqual(second.dropped, ['retries_spent']);
  });

  it('drops an Event the apiserver refuses without retrying it', async () => {
    let sent = 0;
    const forbidden: PostEvent = () => {
      sent++;
      return Promise.reject(new KubeApiError(403, 'Forbidden', 'cannot create events'));
    };
    const { recorder, dropped } = recorderWith(forbidden);
    recorder.record(cluster, input);
    await until(() => recorder.inFlight === 0);
    assert.equal(sent, 1);
    assert.deepEqual(dropped, ['refused']);
  });

  it('drops what comes past the in-flight limit instead of growing', () => {
    const { post, sends } = held();
    const { recorder, dropped } = recorderWith(post, { maxInFlight: 2 });
    for (let i = 0; i < 3; i++) recorder.record(cluster, input);
    assert.equal(sends.length, 2);
    assert.equal(recorder.inFlight, 2);
    assert.deepEqual(dropped, ['in_flight_limit']);
  });

  it('stopping waits for the Events in flight, bounded, and takes no more', async () => {
    const { post, sends } = held();
    const { recorder, dropped } = recorderWith(post);
    recorder.record(cluster, input);
    recorder.record(cluster, input);
    const stopped = recorder.stop(60_000);
    for (const send of sends) send.settle();
    assert.equal(await stopped, 0, 'both sent before the stop returned');
    recorder.record(cluster, input);
    assert.equal(sends.length, 2, 'nothing sent once stopped');
    assert.deepEqual(dropped, ['stopped']);

    const stuck = held();
    const late = recorderWith(stuck.post);
    late.recorder.record(cluster, input);
    assert.equal(
      await late.recorder.stop(10),
      1,
      'an Event still unanswered at the deadline is counted',
    );
  });

  it('stopping cuts a retry pause short: one more try, then the Event is dropped', async () => {
    let sent = 0;
    const down: PostEvent = () => {
      sent++;
      return Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'down'));
    };
    const dropped: EventDropReason[] = [];
    const recorder = new EventRecorder(down, {
      log,
      retry: { baseMs: 60_000, capMs: 60_000 },
      onDropped: (reason) => dropped.push(reason),
    });
    recorder.record(cluster, input);
    await until(() => sent === 1);
    assert.equal(await recorder.stop(30_000), 0);
    assert.equal(sent, 2);
    assert.deepEqual(dropped, ['retries_spent']);
  });
});
