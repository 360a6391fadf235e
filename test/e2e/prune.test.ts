// Deletes and pruning against a real kube-apiserver, etcd and nats-server
// (kubebus/testing): a spec change that drops a child deletes it, objects
// that others pointed at the owner stay, ctx.list reads the children from
// the bus, and a finalizer cleans up with ctx.delete what garbage collection
// cannot reach (an object in another namespace).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import { z } from 'zod';
import { waitFor } from '../support/wait.js';

const Bundle = defineResource({
  group: 'prune.kubebus.dev',
  version: 'v1',
  kind: 'Bundle',
  scope: 'Namespaced',
  spec: z.object({
    items: z.array(z.string().regex(/^[a-z0-9]{1,20}$/)),
    /** a dependency is missing: the reconcile returns early, not Ready, applying nothing */
    waiting: z.boolean().optional(),
  }),
  status: z.object({ listed: z.int() }),
});

const ELSEWHERE = 'bundles-elsewhere';

const operator = defineOperator({
  name: 'bundles',
  for: Bundle,
  owns: [kinds.ConfigMap],
  async reconcile(bundle, ctx) {
    const { name } = bundle.metadata;
    if (bundle.spec.waiting === true)
      return { ready: { status: false, reason: 'Waiting', message: 'a dependency is missing' } };
    await Promise.all(
      bundle.spec.items.map((item) =>
        ctx.apply(kinds.ConfigMap, {
          metadata: { name: `${name}-${item}`, labels: { bundle: name } },
          data: { item },
        }),
      ),
    );
    // in another namespace: no owner reference, so neither GC nor pruning reaches it
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: `${name}-outside`, namespace: ELSEWHERE },
      data: { of: name },
    });
    const listed = await ctx.list(kinds.ConfigMap, { labelSelector: `bundle=${name}` });
    return { status: { listed: listed.length } };
  },
  async finalize(bundle, ctx) {
    await ctx.delete(kinds.ConfigMap, `${bundle.metadata.name}-outside`, ELSEWHERE);
  },
});

describe('pruning and ctx.delete', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ELSEWHERE } });
    await env.install(Bundle);
    await env.run(operator);
  });
  after(() => env.stop());

  const configMap = (name: string, namespace?: string) => env.get(kinds.ConfigMap, name, namespace);
  const listed = async () => (await env.get(Bundle, 'b1'))?.status?.listed;

  it('deletes the child a spec change drops, and only that one', async () => {
    await env.apply({
      apiVersion: 'prune.kubebus.dev/v1',
      kind: 'Bundle',
      metadata: { name: 'b1' },
      spec: { items: ['a', 'b', 'c'] },
    });
    await waitFor(async () => (await listed()) === 3, 'three children, listed from the bus');
    assert.ok(await configMap('b1-outside', ELSEWHERE));

    // pointed at the owner by someone else (no kubebus.dev/controller label): never pruned
    const owner = await env.get(Bundle, 'b1');
    assert.ok(owner);
    const foreign = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'b1-foreign',
        labels: { 'app.kubernetes.io/managed-by': 'kubebus', bundle: 'b1' },
        ownerReferences: [
          {
            apiVersion: 'prune.kubebus.dev/v1',
            kind: 'Bundle',
            name: 'b1',
            uid: owner.metadata.uid,
            controller: true,
          },
        ],
      },
      data: {},
    };
    await env.apply(foreign);

    await env.apply({
      apiVersion: 'prune.kubebus.dev/v1',
      kind: 'Bundle',
      metadata: { name: 'b1' },
      spec: { items: ['a', 'c'] },
    });
    await waitFor(async () => (await configMap('b1-b')) === undefined, 'b1-b pruned');
    // the foreign one is listed too (it carries the label), the pruned one no longer
    await waitFor(async () => (await listed()) === 3, 'a, c and foreign listed');
    for (const kept of ['b1-a', 'b1-c', 'b1-foreign'])
      assert.ok(await configMap(kept), `${kept} is kept`);
    assert.ok(await configMap('b1-outside', ELSEWHERE));
  });

  it('keeps the children while a reconcile returns early, not Ready (waiting for a dependency)', async () => {
    await env.apply({
      apiVersion: 'prune.kubebus.dev/v1',
      kind: 'Bundle',
      metadata: { name: 'b1' },
      spec: { items: ['a', 'c'], waiting: true },
    });
    // pruning comes before the status in a reconcile: once Waiting shows, it would have happened
    await env.waitForCondition(Bundle, 'b1', { type: 'Ready', status: 'False', reason: 'Waiting' });
    for (const kept of ['b1-a', 'b1-c']) assert.ok(await configMap(kept), `${kept} is kept`);

    await env.apply({
      apiVersion: 'prune.kubebus.dev/v1',
      kind: 'Bundle',
      metadata: { name: 'b1' },
      spec: { items: ['a', 'c'], waiting: false },
    });
    await env.waitForCondition(Bundle, 'b1', { type: 'Ready', reason: 'Reconciled' });
    for (const kept of ['b1-a', 'b1-c']) assert.ok(await configMap(kept), `${kept} is kept`);
  });

  it('cleans up with ctx.delete in finalize, and lets the object go', async () => {
    await env.delete(Bundle, 'b1');
    await waitFor(
      async () => (await configMap('b1-outside', ELSEWHERE)) === undefined,
      'the finalizer deletes the ConfigMap in the other namespace',
    );
    await waitFor(async () => (await env.get(Bundle, 'b1')) === undefined, 'b1 released');
  });
});
