import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { KubeObject } from '../events/kube-object.js';
import { KubeApiError } from './api-error.js';
import type { EventInput, EventSend } from './apply.js';
import { EventRecorder, type EventDropReason, type PostEvent } from './event-recorder.js';

const cluster: KubeObject = {
  apiVersion: 'example.kubebus.dev/v1',
  kind: 'DatabaseCluster',
  metadata: {
    name: 'orders',
    namespace: 'team-a',
    uid: 'u1',
    resourceVersion: '7',
    labels: { big: 'x'.repeat(1000) },
  },
  spec: { replicas: 3 },
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
const apiError = (status: number, message = 'no', reason = 'Reason') =>
  new KubeApiError(status, reason, message);

/** A recorder with quick retries, and what it dropped. */
function recorderWith(
  post: PostEvent,
  options: { maxInFlight?: number; maxAttempts?: number; onDropped?: () => void } = {},
) {
  const dropped: EventDropReason[] = [];
  const recorder = new EventRecorder(post, {
    log,
    retry: quickRetry,
    onDropped: (reason) => dropped.push(reason),
    ...options,
  });
  return { recorder, dropped };
}

/** A send that stays open until the test settles it. */
function held() {
  const sends: {
    regarding: KubeObject;
    send: Required<EventSend>;
    settle: (error?: Error) => void;
  }[] = [];
  const post: PostEvent = (regarding, _input, send) =>
    new Promise<void>((resolve, reject) => {
      sends.push({
        regarding,
        send,
        settle: (error) => (error === undefined ? resolve() : reject(error)),
      });
      send.signal.addEventListener('abort', () => {
        reject(new DOMException('aborted', 'AbortError'));
      });
    });
  return { post, sends };
}

/** Posts answering `answers` in turn (an error to throw, or undefined for success), counting them. */
function answering(...answers: (Error | undefined)[]) {
  const sends: Required<EventSend>[] = [];
  const post: PostEvent = (_regarding, _input, send) => {
    sends.push(send);
    const answer = answers[Math.min(sends.length, answers.length) - 1];
    return answer === undefined ? Promise.resolve() : Promise.reject(answer);
  };
  return { post, sends };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 1_000 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(condition(), 'condition not reached');
};

describe('EventRecorder', () => {
  it('returns before the Event is sent, keeping only what the Event names of the object', async () => {
    const { post, sends } = held();
    const { recorder, dropped } = recorderWith(post);
    const before = Date.now();
    recorder.record(cluster, input);
    assert.equal(recorder.inFlight, 1, 'sent in the background, not yet answered');
    assert.equal(sends.length, 1, 'the send started at once');
    const [first] = sends;
    assert.ok(first);
    assert.ok(first.send.time.getTime() >= before && first.send.time.getTime() <= Date.now());
    assert.match(first.send.name, /^orders\.[0-9a-f]{16}$/);
    assert.deepEqual(first.regarding, {
      apiVersion: 'example.kubebus.dev/v1',
      kind: 'DatabaseCluster',
      metadata: { name: 'orders', namespace: 'team-a', uid: 'u1', resourceVersion: '7' },
    });
    first.settle();
    await until(() => recorder.inFlight === 0);
    assert.deepEqual(dropped, []);
  });

  it('retries a transient failure under the same name and time; a retry answered AlreadyExists landed', async () => {
    const throttled = answering(apiError(429), undefined);
    const first = recorderWith(throttled.post);
    first.recorder.record(cluster, input);
    await until(() => first.recorder.inFlight === 0);
    assert.equal(throttled.sends.length, 2);
    assert.equal(throttled.sends[0]?.name, throttled.sends[1]?.name);
    assert.equal(throttled.sends[0]?.time, throttled.sends[1]?.time);
    assert.deepEqual(first.dropped, []);

    // the first POST landed but its answer was lost: the retry finds it there
    const landed = answering(apiError(504), apiError(409, 'already exists', 'AlreadyExists'));
    const second = recorderWith(landed.post);
    second.recorder.record(cluster, input);
    await until(() => second.recorder.inFlight === 0);
    assert.equal(landed.sends.length, 2);
    assert.deepEqual(second.dropped, []);
  });

  it('takes an Event named once that is there already as recorded, at the first answer', async () => {
    const there = answering(apiError(409, 'already exists', 'AlreadyExists'));
    const { recorder, dropped } = recorderWith(there.post);
    recorder.record(cluster, input, undefined, 'orders.0123456789abcdef');
    await until(() => recorder.inFlight === 0);
    assert.equal(there.sends.length, 1);
    assert.equal(there.sends[0]?.name, 'orders.0123456789abcdef');
    assert.deepEqual(dropped, []);
  });

  it('drops an Event when its tries are spent, refused, its namespace gone, or a bug', async () => {
    const cases: [PostEvent, EventDropReason, number][] = [
      [answering(apiError(503)).post, 'retries_spent', 3],
      [answering(apiError(403, 'cannot create events')).post, 'refused', 1],
      [answering(apiError(422, 'note too long')).post, 'refused', 1],
      [answering(apiError(404, 'namespaces "gone" not found')).post, 'namespace_gone', 1],
      [
        answering(
          apiError(
            403,
            'unable to create new content in namespace x because it is being terminated',
          ),
        ).post,
        'namespace_gone',
        1,
      ],
      [answering(new TypeError('a bug')).post, 'failed', 1],
      [
        () => {
          throw new TypeError('thrown before any promise');
        },
        'failed',
        1,
      ],
    ];
    for (const [post, reason, tries] of cases) {
      let sent = 0;
      const counting: PostEvent = (...args) => {
        sent++;
        return post(...args);
      };
      const { recorder, dropped } = recorderWith(counting, { maxAttempts: 3 });
      recorder.record(cluster, input);
      await until(() => recorder.inFlight === 0);
      assert.deepEqual(dropped, [reason]);
      assert.equal(sent, tries, `${reason}: ${tries} tries`);
    }
  });

  it('asks the fence before each try: a reconcile that lost its partition sends no retry', async () => {
    const down = answering(apiError(503));
    const { recorder, dropped } = recorderWith(down.post);
    let mayAct = true;
    recorder.record(cluster, input, () => {
      if (!mayAct) throw new DOMException('the partition moved', 'AbortError');
      mayAct = false;
    });
    await until(() => recorder.inFlight === 0);
    assert.equal(down.sends.length, 1);
    assert.deepEqual(dropped, ['fenced']);
  });

  it('drops what comes past the in-flight limit instead of growing', () => {
    const { post, sends } = held();
    const { recorder, dropped } = recorderWith(post, { maxInFlight: 2 });
    for (let i = 0; i < 3; i++) recorder.record(cluster, input);
    assert.equal(sends.length, 2);
    assert.equal(recorder.inFlight, 2);
    assert.deepEqual(dropped, ['in_flight_limit']);
  });

  it('a metric or logger that throws is no unhandled rejection', async () => {
    const failing = answering(apiError(403));
    const { recorder } = recorderWith(failing.post, {
      onDropped: () => {
        throw new Error('broken metric');
      },
    });
    recorder.record(cluster, input);
    await until(() => recorder.inFlight === 0);
    assert.equal(await recorder.stop(1_000), 0);
  });

  it('stopping waits for the Events in flight, then aborts the rest: counted as stopped', async () => {
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
    assert.equal(await late.recorder.stop(10), 1, 'unanswered at the deadline');
    assert.equal(stuck.sends[0]?.send.signal.aborted, true, 'its request aborted');
    await until(() => late.recorder.inFlight === 0);
    assert.deepEqual(late.dropped, ['stopped']);
  });

  it('stopping cuts a retry pause short: one more try, then the Event is dropped as stopped', async () => {
    const down = answering(apiError(503));
    const dropped: EventDropReason[] = [];
    const recorder = new EventRecorder(down.post, {
      log,
      retry: { baseMs: 60_000, capMs: 60_000 },
      onDropped: (reason) => dropped.push(reason),
    });
    recorder.record(cluster, input);
    await until(() => down.sends.length === 1);
    assert.equal(await recorder.stop(30_000), 0);
    assert.equal(down.sends.length, 2);
    assert.deepEqual(dropped, ['stopped']);
  });
});
