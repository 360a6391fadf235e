// Pruning deletes only what the apiserver says is the owner's child. The bus
// is what its publishers say: a record forged by anyone allowed to publish a
// kind's changes (a watcher's NATS user, another operator's watcher) once
// made the reconciler delete an admin's ConfigMap by claiming it as an
// owner's child. Each pruned object is read from the apiserver first, as
// ctx.delete reads it (ADR 0037).
import { connectionOf } from '@kubebus/cli/commands';
import { subjects } from '@kubebus/shared/bus';
import { encodeStructured, kubeEvent } from '@kubebus/shared/events';
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

const holders = defineOperator({
  name: 'holders',
  for: Holder,
  owns: [kinds.ConfigMap],
  async reconcile(holder, ctx) {
    if (holder.spec.keep)
      await ctx.apply(kinds.ConfigMap, {
        metadata: { name: `held-${holder.metadata.name}` },
        data: { kept: 'yes' },
      });
    return { status: { kept: holder.spec.keep } };
  },
});

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

describe('pruning a child the bus was told about', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
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
    const nc = await connect(connectionOf({}, env.natsEnv).options);
    try {
      const forged = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'admins-settings',
          namespace: 'default',
          uid: randomUUID(),
          resourceVersion: '999999',
          labels: {
            'app.kubernetes.io/managed-by': 'kubebus',
            'kubebus.dev/controller': 'holders',
          },
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
      };
      const event = kubeEvent({
        resource: CONFIGMAPS,
        object: forged,
        op: 'update',
        reason: 'watch',
        source: 'https://forged.example',
        time: new Date(),
      });
      const { payload, headers } = encodeStructured(event);
      const h = natsHeaders();
      for (const [name, value] of Object.entries(headers)) h.set(name, value);
      await jetstream(nc).publish(
        subjects.event({
          group: '',
          resource: 'configmaps',
          namespace: 'default',
          name: 'admins-settings',
        }),
        payload,
        { headers: h },
      );
    } finally {
      await nc.close();
    }
    await env.run(holders);
    // the owner drops its child: a listing prunes what the bus says it owned
    await holder(false);
    await waitFor(
      async () => (await env.get(kinds.ConfigMap, 'held-h')) === undefined,
      'its own dropped child pruned',
    );
    const settings = await env.get(kinds.ConfigMap, 'admins-settings');
    assert.deepEqual(settings?.data, { important: 'yes' }, "the admin's ConfigMap was deleted");
  });
});
