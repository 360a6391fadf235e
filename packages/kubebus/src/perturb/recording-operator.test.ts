import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Operator, ReconcileContext } from '@kubebus/shared/definition';
import { isAbandonedReconcile } from '@kubebus/shared/runtime';
import { RecordingOperator } from './recording-operator.js';

const page = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps' };

/** Writes a page, then a checkpoint: two writes per reconcile. */
const operator = {
  name: 'pages',
  for: { group: 'example.kubebus.dev', version: 'v1', kind: 'Sample', plural: 'samples' },
  owns: [page],
  async reconcile(_object: unknown, ctx: ReconcileContext<unknown>) {
    await ctx.apply(page as never, { metadata: { name: 'page' } } as never);
    await ctx.apply(page as never, { metadata: { name: 'checkpoint' } } as never);
    return {};
  },
} as unknown as Operator;

/** A context whose writes land at once and are recorded on the "bus" at once. */
function contextOf(signal: AbortSignal, written: string[]): ReconcileContext<unknown> {
  const stored = { metadata: { name: 'x', resourceVersion: '7' } };
  return {
    signal,
    attempt: 1,
    apply: (_resource: unknown, body: { metadata: { name: string } }) => {
      written.push(body.metadata.name);
      return Promise.resolve(stored);
    },
    get: () => Promise.resolve(stored),
    createOnce: () => Promise.resolve('created'),
    delete: () => Promise.resolve('deleted'),
    event: () => Promise.resolve(),
  } as unknown as ReconcileContext<unknown>;
}

const object = (generation: number) =>
  ({
    metadata: { name: 's', namespace: 'kbt-0', uid: 'u1', generation, resourceVersion: '5' },
  }) as never;

test('a crashed reconcile is parked: it neither resolves nor rejects until the roles stop', async () => {
  const recording = new RecordingOperator(operator);
  recording.step = 2;
  const armed = recording.arm({ key: 'kbt-0', step: 2, k: 1, matches: () => true });
  const dead = recording.incarnation();
  const written: string[] = [];
  let settled: 'resolved' | Error | undefined;
  const running = dead.reconcile(object(2), contextOf(new AbortController().signal, written)).then(
    () => (settled = 'resolved'),
    (error: Error) => (settled = error),
  );
  assert.equal(await armed, 'crashed');
  assert.deepEqual(written, ['page'], 'stopped right after the first write');
  // a later delivery to the dead incarnation parks too, without writing
  const again = dead
    .reconcile(object(2), contextOf(new AbortController().signal, written))
    .catch((e: unknown) => e);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, undefined, 'parked, not thrown into the runtime');
  assert.equal(recording.activity('kbt-0').running, 0, 'the crashed one counts as ended');

  // the driver abandons them as it stops the roles (their graceful stop drains in-flight work)
  recording.abandon();
  await running;
  assert.ok(isAbandonedReconcile(settled), String(settled));
  assert.ok(isAbandonedReconcile(await again));
  // what the dead roles are handed while they stop ends at once
  const late = dead.reconcile(object(2), contextOf(new AbortController().signal, written));
  await assert.rejects(late, (error) => isAbandonedReconcile(error));
  assert.deepEqual(written, ['page']);
  assert.deepEqual(
    recording.recordsOf('kbt-0').map((r) => r.outcome),
    ['crashed'],
  );

  // the next incarnation does the work
  const next = recording.incarnation();
  await next.reconcile(object(2), contextOf(new AbortController().signal, written));
  assert.deepEqual(written, ['page', 'page', 'checkpoint']);
});

test('an armed crash takes only a reconcile of its step that saw the change', async () => {
  const recording = new RecordingOperator(operator);
  const live = recording.incarnation();
  const written: string[] = [];
  recording.step = 3;
  const armed = recording.arm({
    key: 'kbt-0',
    step: 3,
    k: 2,
    matches: (seen) => seen.generation > 2,
  });
  // a late reconcile of the old generation: not the one armed
  await live.reconcile(object(2), contextOf(new AbortController().signal, written));
  const abort = new AbortController();
  const crashed = live.reconcile(object(3), contextOf(abort.signal, written));
  assert.equal(await armed, 'crashed');
  assert.deepEqual(
    recording.recordsOf('kbt-0', 3).map((r) => [r.seen.generation, r.outcome, r.writes.length]),
    [
      [2, 'ok', 2],
      [3, 'crashed', 2],
    ],
  );
  // a revoke or stop aborting the signal ends a parked reconcile too
  abort.abort();
  await assert.rejects(crashed, (error) => isAbandonedReconcile(error));
});

test('an armed hold pauses a reconcile after its k-th write as running, and it finishes once released', async () => {
  const recording = new RecordingOperator(operator);
  const live = recording.incarnation();
  const written: string[] = [];
  recording.step = 1;
  const armed = recording.arm({ key: 'kbt-0', step: 1, k: 1, matches: () => true, mode: 'hold' });
  const held = live.reconcile(object(2), contextOf(new AbortController().signal, written));
  assert.equal(await armed, 'paused');
  const paused = recording.zombie;
  assert.ok(paused !== undefined);
  assert.deepEqual(written, ['page']);
  // still its instance's reconcile: the run is busy until it ends
  assert.equal(recording.activity('kbt-0').running, 1);
  paused.release();
  await held;
  assert.equal(await paused.ended, undefined);
  assert.deepEqual(written, ['page', 'checkpoint']);
  assert.deepEqual(
    recording.recordsOf('kbt-0', 1).map((r) => r.outcome),
    ['ok'],
  );
});

test('an armed pause holds a reconcile after its k-th write until released: a zombie that goes on', async () => {
  const recording = new RecordingOperator(operator);
  const live = recording.incarnation();
  const written: string[] = [];
  recording.step = 1;
  const armed = recording.arm({ key: 'kbt-0', step: 1, k: 1, matches: () => true, mode: 'pause' });
  const abort = new AbortController();
  const paused = live.reconcile(object(2), contextOf(abort.signal, written));
  assert.equal(await armed, 'paused');
  const zombie = recording.zombie;
  assert.ok(zombie !== undefined);
  assert.deepEqual(written, ['page'], 'paused right after the first write');
  assert.equal(
    recording.activity('kbt-0').running,
    0,
    'the paused one is not what keeps a run busy',
  );
  // the instance that takes the partition meanwhile reconciles in full
  await live.reconcile(object(2), contextOf(new AbortController().signal, written));
  assert.deepEqual(written, ['page', 'page', 'checkpoint']);
  // its runtime fences it (the lease lost), then it is released and finishes what it started
  assert.equal(zombie.fenced, false);
  abort.abort();
  assert.equal(await zombie.fencedWithin(1_000), true);
  zombie.release();
  await paused;
  assert.equal(await zombie.ended, undefined);
  assert.deepEqual(written, ['page', 'page', 'checkpoint', 'checkpoint']);
  assert.deepEqual(zombie.record.writes.slice(zombie.writesAtPause), [
    'apply ConfigMap checkpoint',
  ]);
  assert.equal(zombie.record.outcome, 'handed-over');
});

test('a start hook runs before the first matching reconcile writes, and names it', async () => {
  const recording = new RecordingOperator(operator);
  const live = recording.incarnation();
  const written: string[] = [];
  recording.step = 1;
  const order: string[] = [];
  const taken = recording.atStart({
    key: 'kbt-0',
    step: 1,
    matches: (seen) => seen.generation > 1,
    run: () => {
      order.push(`hook after ${written.length} writes`);
      return Promise.resolve();
    },
  });
  // a reconcile of the old generation is not the one
  await live.reconcile(object(1), contextOf(new AbortController().signal, written));
  assert.deepEqual(order, []);
  await live.reconcile(object(2), contextOf(new AbortController().signal, written));
  assert.deepEqual(order, ['hook after 2 writes'], 'ran before the second reconcile wrote');
  const record = await taken;
  assert.deepEqual([record.seen.generation, record.writes.length, record.outcome], [2, 2, 'ok']);
  // once only
  await live.reconcile(object(3), contextOf(new AbortController().signal, written));
  assert.equal(order.length, 1);
});

test('a declared external call is a write when made, counted per key; found done, neither', async () => {
  const keys: string[] = [];
  const context = (done: boolean) =>
    ({
      ...contextOf(new AbortController().signal, []),
      once: async (key: string, effect: { perform(id: string): Promise<void> }) => {
        if (done) return 'done';
        keys.push(key);
        await effect.perform(`op/u1/${key}`);
        return 'performed';
      },
    }) as unknown as ReconcileContext<unknown>;
  const charging = {
    ...operator,
    async reconcile(_object: unknown, ctx: ReconcileContext<unknown>) {
      await ctx.once('charge', { perform: () => Promise.resolve() });
      return {};
    },
  } as unknown as Operator;
  const wrapped = new RecordingOperator(charging);
  wrapped.step = 0;
  const run = wrapped.incarnation();
  await run.reconcile(object(1), context(false));
  await run.reconcile(object(1), context(true));
  assert.deepEqual(keys, ['charge']);
  assert.deepEqual(
    wrapped.recordsOf('kbt-0').map((r) => r.writes),
    [['once charge'], []],
  );
  assert.deepEqual(wrapped.effectsOf('kbt-0'), { charge: 1 });
  assert.deepEqual(wrapped.effectsOf('kbt-1'), {}, 'per place');
});

test('a crash armed at a declared call comes after the call and before the runtime records it', async () => {
  const made: string[] = [];
  const recordedMade: string[] = [];
  // the runtime's ctx.once: the call, then its record
  const context = {
    ...contextOf(new AbortController().signal, []),
    once: async (key: string, effect: { perform(id: string): Promise<void> }) => {
      await effect.perform(`op/u1/${key}`);
      recordedMade.push(key);
      return 'performed';
    },
  } as unknown as ReconcileContext<unknown>;
  const charging = {
    ...operator,
    async reconcile(_object: unknown, ctx: ReconcileContext<unknown>) {
      await ctx.once('charge', {
        perform: (id) => {
          made.push(id);
          return Promise.resolve();
        },
      });
      return {};
    },
  } as unknown as Operator;
  const recording = new RecordingOperator(charging);
  recording.step = 1;
  const armed = recording.arm({ key: 'kbt-0', step: 1, k: 1, matches: () => true });
  const dead = recording.incarnation();
  const running = dead.reconcile(object(1), context).catch((e: unknown) => e);
  assert.equal(await armed, 'crashed');
  assert.deepEqual(made, ['op/u1/charge'], 'the call was made');
  assert.deepEqual(recordedMade, [], 'and the crash came before its record');
  assert.deepEqual(recording.effectsOf('kbt-0'), { charge: 1 });
  recording.abandon();
  assert.ok(isAbandonedReconcile(await running));
});
