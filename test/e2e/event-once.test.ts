// `ctx.event(…, { once })` records an Event once per object and key: every
// reconcile of three generations announces it, the apiserver keeps one,
// while an Event recorded without `once` lands for each reconcile.
import { EventsV1Api, KubeConfig } from '@kubernetes/client-node';
import { defineOperator, defineResource } from 'kubebus';
import {
  startTestEnvironment,
  type RunningOperatorHandle,
  type TestEnvironment,
} from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';

const Notice = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Notice',
  scope: 'Namespaced',
  // `round` only makes a new generation: another reconcile
  spec: z.object({ round: z.int() }),
  status: z.object({ round: z.int() }).partial(),
});

let reconciles = 0;

const notices = defineOperator({
  name: 'notices',
  for: Notice,
  async reconcile(notice, ctx) {
    reconciles++;
    await ctx.event('Normal', 'Announced', 'announced once', { once: 'announced' });
    await ctx.event('Normal', 'Reconciled', `round ${notice.spec.round}`);
    return { status: { round: notice.spec.round } };
  },
});

describe('Events recorded once', { timeout: 300_000 }, () => {
  let env: TestEnvironment;
  let running: RunningOperatorHandle;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Notice);
    running = await env.run(notices);
  });
  after(() => env?.stop());

  const events = async (reason: string) => {
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    const { items } = await kc
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace: 'default' });
    return items.filter((e) => e.reason === reason && e.regarding?.name === 'launch');
  };

  it('keeps one Event named once, however many reconciles record it', async () => {
    for (const round of [1, 2, 3]) {
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Notice',
        metadata: { name: 'launch' },
        spec: { round },
      });
      await env.waitFor(Notice, 'launch', (n) => n?.status?.round === round);
    }
    // stopped: every Event it sent in the background has been answered
    await running.stop();
    assert.ok(reconciles >= 3, `${reconciles} reconciles`);
    assert.equal((await events('Reconciled')).length, reconciles, 'one per reconcile');
    assert.equal((await events('Announced')).length, 1, 'one, named once');
  });
});
