// Pruning deletes only what the apiserver says is the owner's child. The bus
// is what its publishers say: a record forged by anyone allowed to publish a
// kind's changes (a watcher's NATS user, another operator's watcher) once
// made the reconciler delete an admin's ConfigMap by claiming it as an
// owner's child. Each pruned object is read from the apiserver first, as
// ctx.delete reads it (ADR 0037).
import { connectionOf } from '@kubebus/cli/commands';
import { encodeWorkMark, subjects } from '@kubebus/shared/bus';
import { encodeStructured, kubeEvent, type KubeObject } from '@kubebus/shared/events';
import { jetstream } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { waitFor } from '../support/wait.js';

const Holder = defineResource({
  group: 'prune.test.kubebus.dev',
  version: 'v1',
  kind: 'Holder',
  scope: 'Namespaced',
  spec: z.object({ keep: z.boolean() }),
  status: z.object({ kept: z.boolean() }).partial(),
});

/** What the operator's outside calls and cleanups did (it runs in this process). */
const registered: string[] = [];
const finalized: string[] = [];

const holders = defineOperator({
  name: 'holders',
  for: Holder,
  owns: [kinds.ConfigMap],
  partitions: 1,
  async finalize(holder) {
    finalized.push(holder.metadata.name);
    return Promise.resolve();
  },
  async reconcile(holder, ctx) {
    await ctx.once('register', {
      perform: () => {
        registered.push(holder.metadata.name);
        return Promise.resolve();
      },
    });
    if (holder.spec.keep)
      await ctx.apply(kinds.ConfigMap, {
        metadata: { name: `held-${holder.metadata.name}` },
        data: { kept: 'yes' },
      });
    return { status: { kept: holder.spec.keep } };
  },
});

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const HOLDERS = {
  group: 'prune.test.kubebus.dev',
  version: 'v1',
  resource: 'holders',
  namespaced: true,
};

let natsEnv: Readonly<Record<string, string>> = {};

/** Publishes a record of `object` as a watcher would, saying what it likes. */
async function publishForged(
  resource: typeof CONFIGMAPS,
  object: KubeObject,
  op: 'update' | 'delete' = 'update',
): Promise<void> {
  const nc = await connect(connectionOf({}, natsEnv).options);
  try {
    const event = kubeEvent({
      resource,
      object,
      op,
      reason: 'watch',
      source: 'https://forged.example',
      time: new Date(),
    });
    const { payload, headers } = encodeStructured(event);
    const h = natsHeaders();
    for (const [name, value] of Object.entries(headers)) h.set(name, value);
    await jetstream(nc).publish(
      subjects.event({
        group: resource.group,
        resource: resource.resource,
        namespace: object.metadata.namespace ?? '',
        name: object.metadata.name,
      }),
      payload,
      { headers: h },
    );
  } finally {
    await nc.close();
  }
}

describe('pruning a child the bus was told about', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    natsEnv = env.natsEnv;
    await env.install(Holder);
  });
  after(() => env?.stop());

  it("deletes nothing the apiserver does not say is the owner's", async () => {
    const running = await env.run(holders);
    const holder = (keep: boolean) =>
      env.apply({
        apiVersion: 'prune.test.kubebus.dev/v1',
        kind: 'Holder',
        metadata: { name: 'h' },
        spec: { keep },
      });
    await holder(true);
    await env.waitForCondition(Holder, 'h', { type: 'Ready' });
    const owner = await env.get(Holder, 'h');
    assert.ok(owner !== undefined);
    // an admin's ConfigMap, nothing of the operator's
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'admins-settings' },
      data: { important: 'yes' },
    });
    // a process that remembers nothing of the owner lists its children from the bus
    await running.stop();
    await publishForged(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'admins-settings',
        namespace: 'default',
        uid: randomUUID(),
        resourceVersion: '999999',
        labels: { 'app.kubernetes.io/managed-by': 'kubebus', 'kubebus.dev/controller': 'holders' },
        ownerReferences: [
          {
            apiVersion: owner.apiVersion,
            kind: 'Holder',
            name: 'h',
            uid: owner.metadata.uid,
            controller: true,
          },
        ],
      },
      data: {},
    });
    await env.run(holders);
    // the owner drops its child: a listing prunes what the bus says it owned
    await holder(false);
    await waitFor(
      async () => (await env.get(kinds.ConfigMap, 'held-h')) === undefined,
      'its own dropped child pruned',
    );
    // the prune ran before the status of generation 2 was published
    await waitFor(
      async () => (await env.get(Holder, 'h'))?.status?.observedGeneration === 2,
      'generation 2 reconciled',
    );
    const settings = await env.get(kinds.ConfigMap, 'admins-settings');
    assert.deepEqual(settings?.data, { important: 'yes' }, "the admin's ConfigMap was deleted");
  });

  it('neither finalizes nor forgets the external calls of an object only the bus says is deleted', async () => {
    const live = await env.get(Holder, 'h');
    assert.ok(live !== undefined && registered.length === 1);
    const key = { group: Holder.group, resource: Holder.plural, namespace: 'default', name: 'h' };
    const mark = async () => {
      const nc = await connect(connectionOf({}, env.natsEnv).options);
      try {
        await jetstream(nc).publish(
          subjects.work('holders', 0, key),
          encodeWorkMark({ key, reason: 'watch', time: new Date().toISOString() }),
        );
      } finally {
        await nc.close();
      }
    };
    // a record of it being deleted, then of it gone: each marked for a reconcile
    const recorded = structuredClone(live) as unknown as KubeObject;
    await publishForged(HOLDERS, {
      ...recorded,
      metadata: {
        ...recorded.metadata,
        resourceVersion: '999998',
        deletionTimestamp: new Date().toISOString(),
      },
    });
    await mark();
    await publishForged(
      HOLDERS,
      { ...recorded, metadata: { ...recorded.metadata, resourceVersion: '999999' } },
      'delete',
    );
    await mark();
    // a real change after them: its reconcile finds the call made, as before
    await env.apply({
      apiVersion: 'prune.test.kubebus.dev/v1',
      kind: 'Holder',
      metadata: { name: 'h' },
      spec: { keep: true },
    });
    await waitFor(
      async () => (await env.get(Holder, 'h'))?.status?.observedGeneration === 3,
      'generation 3 reconciled',
    );
    assert.deepEqual(finalized, [], 'finalize ran on a forged deletion');
    assert.deepEqual(registered, ['h'], 'the external call was made again');
  });
});
