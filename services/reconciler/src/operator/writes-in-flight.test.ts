// A reconcile ends with the writes it started (writes-in-flight.ts): after a
// failed Promise.all, the siblings still on the wire settle before the
// runtime acts on the failure (a retry would otherwise run beside them).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineOperator, defineResource, kinds } from '@kubebus/shared/definition';
import type { KubeObject } from '@kubebus/shared/events';
import type { KubeClient } from '@kubebus/shared/kube';
import { KnownResources } from './known-resources.js';
import { operatorContext } from './operator-context.js';
import { WritesInFlight } from './writes-in-flight.js';

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

describe('WritesInFlight', () => {
  it('settles once every tracked write has, a refused one included', async () => {
    const writes = new WritesInFlight();
    const slow = gate();
    void writes.track(slow.opened);
    void writes.track(Promise.reject(new Error('refused'))).catch(() => undefined);
    const settled = writes.settled();
    assert.equal(await hasSettled(settled), false, 'the slow write is still on the wire');
    slow.open();
    await settled;
    assert.equal(writes.size, 0);
  });

  it('waits for a write that a settled write’s continuation starts', async () => {
    const writes = new WritesInFlight();
    const first = gate();
    const second = gate();
    let secondStarted = false;
    // as `await createOnce(); await apply()` inside a branch of a failed Promise.all
    void (async () => {
      await writes.track(first.opened);
      for (let turn = 0; turn < 5; turn++) await Promise.resolve();
      secondStarted = true;
      await writes.track(second.opened);
    })();
    const settled = writes.settled();
    first.open();
    assert.equal(await hasSettled(settled), false);
    assert.equal(secondStarted, true);
    second.open();
    await settled;
  });
});

const Site = defineResource({
  group: 'sites.example.com',
  version: 'v1',
  kind: 'Site',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({}),
});
const operator = defineOperator({
  name: 'sites',
  for: Site,
  owns: [kinds.ConfigMap],
  reconcile: () => Promise.resolve(undefined),
});
const owner: KubeObject = {
  apiVersion: 'sites.example.com/v1',
  kind: 'Site',
  metadata: { name: 's', namespace: 'ns', uid: 'u1', resourceVersion: '5', generation: 1 },
};

describe('a ctx with its writes tracked', () => {
  it('keeps a write of a failed Promise.all in flight until it settles', async () => {
    const answer = gate();
    // an apiserver that answers the create only when the test says so
    const client = {
      request: async () => {
        await answer.opened;
        return {};
      },
    } as unknown as KubeClient;
    const writes = new WritesInFlight();
    const ctx = operatorContext(
      {
        operator,
        known: new KnownResources(operator),
        reader: { read: () => Promise.resolve(undefined) },
        client,
        applied: undefined as never,
        fieldManager: 'sites',
        instance: 'i',
        dryRun: false,
        deps: undefined,
        lister: { list: () => Promise.resolve([]) },
        storage: undefined as never,
        touched: new Set(),
        writes,
      },
      owner,
      {
        signal: new AbortController().signal,
        log: undefined as never,
        reconcileId: 'r',
        traceparent: '',
        attempt: 1,
      },
    );
    await assert.rejects(
      Promise.all([
        ctx.createOnce(kinds.ConfigMap, { metadata: { name: 'c' }, data: {} }),
        // not in `owns`: refused at the call, while the create is on the wire
        ctx.delete(kinds.Secret, 'x'),
      ]),
      /not in `owns`/,
    );
    assert.equal(writes.size, 1, 'the create is still tracked');
    const settled = writes.settled();
    assert.equal(await hasSettled(settled), false);
    answer.open();
    await settled;
    assert.equal(writes.size, 0);
  });
});
