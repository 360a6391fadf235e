// A reconcile ends with the ctx calls it started (in-flight-calls.ts, ADR
// 0030): after a failed Promise.all, the siblings still on the wire settle
// before the runtime acts on the failure (a retry would otherwise run beside
// them); the wait gives up when the reconcile is stopped or after its bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kinds } from '@kubebus/shared/definition';
import type { KubeClient } from '@kubebus/shared/kube';
import { InFlightCalls, endingWith } from './in-flight-calls.js';
import { siteContext } from './site-context.test-support.js';

/** A promise and the function that resolves it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Whether `promise` has settled once the microtasks queued now have run. */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('InFlightCalls', () => {
  it('settles once every tracked write has, a refused one included', async () => {
    const calls = new InFlightCalls();
    const slow = gate();
    void calls.track(slow.opened);
    void calls.track(Promise.reject(new Error('refused'))).catch(() => undefined);
    const settled = calls.settled();
    assert.equal(await hasSettled(settled), false, 'the slow write is still on the wire');
    slow.open();
    await settled;
    assert.equal(calls.size, 0);
  });

  it('waits for a write that a settled write’s continuation starts', async () => {
    const calls = new InFlightCalls();
    const first = gate();
    const second = gate();
    let secondStarted = false;
    // as `await createOnce(); await apply()` inside a branch of a failed Promise.all
    void (async () => {
      await calls.track(first.opened);
      for (let turn = 0; turn < 5; turn++) await Promise.resolve();
      secondStarted = true;
      await calls.track(second.opened);
    })();
    const settled = calls.settled();
    first.open();
    assert.equal(await hasSettled(settled), false);
    assert.equal(secondStarted, true);
    second.open();
    await settled;
  });
});

describe('a ctx with its calls tracked', () => {
  it('keeps a write of a failed Promise.all in flight until it settles', async () => {
    const answer = gate();
    // an apiserver that answers the create only when the test says so
    const client = {
      request: async () => {
        await answer.opened;
        return {};
      },
    } as unknown as KubeClient;
    const calls = new InFlightCalls();
    const ctx = siteContext(client, new AbortController().signal, { calls });
    await assert.rejects(
      Promise.all([
        ctx.createOnce(kinds.ConfigMap, { metadata: { name: 'c' }, data: {} }),
        // not in `owns`: refused at the call, while the create is on the wire
        ctx.delete(kinds.Secret, 'x'),
      ]),
      /not in `owns`/,
    );
    assert.equal(calls.size, 1, 'the create is still tracked');
    const settled = calls.settled();
    assert.equal(await hasSettled(settled), false);
    answer.open();
    await settled;
    assert.equal(calls.size, 0);
  });
});

describe('endingWith', () => {
  it('rethrows a failed call only once the calls it left running have settled', async () => {
    const calls = new InFlightCalls();
    const write = gate();
    const failed = endingWith(calls, () =>
      Promise.all([calls.track(write.opened), Promise.reject(new Error('refused'))]),
    );
    assert.equal(await hasSettled(failed), false, 'a sibling is still on the wire');
    write.open();
    await assert.rejects(failed, /refused/);
  });

  it('stops waiting when the reconcile is stopped, and says so', async () => {
    const calls = new InFlightCalls();
    const abort = new AbortController();
    const unsettled: string[] = [];
    const failed = endingWith(
      calls,
      () =>
        Promise.all([calls.track(new Promise(() => undefined)), Promise.reject(new Error('x'))]),
      {
        signal: abort.signal,
        onUnsettled: (reason, running) => unsettled.push(`${reason} ${String(running)}`),
      },
    );
    assert.equal(await hasSettled(failed), false);
    abort.abort();
    await assert.rejects(failed, /x/);
    assert.deepEqual(unsettled, ['aborted 1']);
  });

  it('stops waiting after its bound, and says so', async () => {
    const calls = new InFlightCalls();
    const unsettled: string[] = [];
    const ended = endingWith(
      calls,
      () => {
        // a call left running that never settles (an external effect without a timeout)
        void calls.track(new Promise(() => undefined));
        return Promise.resolve('reconciled');
      },
      {
        boundMs: 20,
        onUnsettled: (reason, running) => unsettled.push(`${reason} ${String(running)}`),
      },
    );
    assert.equal(await ended, 'reconciled');
    assert.deepEqual(unsettled, ['overdue 1']);
  });
});
