// An upgrade, as an operator author tests it on the test kit: a new version
// of the operator, run where the old one ran, reconciles every existing
// object again with nothing changed on them (the upgrade sweep `kubebus run`
// does), whether the version is a hash of the new reconcile or given — those
// the version before dead-lettered included.
import { defineOperator, defineResource } from 'kubebus';
import { connectionOf } from '@kubebus/cli/commands';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { waitFor } from '../support/wait.js';

const Widget = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Widget',
  scope: 'Namespaced',
  spec: z.object({ size: z.int() }),
  status: z.object({ build: z.string() }).partial(),
});

const firstBuild = defineOperator({
  name: 'widgets',
  for: Widget,
  reconcile: async () => ({ status: { build: 'one' } }),
});

/** The next builds: another reconcile's source, then the same source told apart by its version. */
const laterBuild = (build: string) =>
  defineOperator({
    name: 'widgets',
    for: Widget,
    reconcile: async (widget) => ({
      status: { build: `${build} of size ${String(widget.spec.size)}` },
    }),
  });

describe('the test kit runs an upgrade as kubebus run does', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Widget);
  });
  after(() => env?.stop());

  const buildOf = async (name: string, build: string) =>
    (await env.waitFor(Widget, name, (w) => w?.status?.build === build))?.status?.build;

  /**
   * No work or status intent left for the next build: what it reconciles then
   * is the sweep's doing, not the reconcile its predecessor's status write asked for.
   */
  const drained = async () => {
    const nc = await connect(connectionOf({}, env.natsEnv).options);
    try {
      const jsm = await jetstreamManager(nc);
      for (const stream of ['KUBEBUS_WORK', 'KUBEBUS_STATUS'])
        for await (const consumer of jsm.consumers.list(stream))
          if (consumer.num_pending + consumer.num_ack_pending > 0) return false;
      return true;
    } finally {
      await nc.close();
    }
  };
  const stopDrained = async (running: { stop(): Promise<void> }) => {
    await waitFor(drained, 'the work of the build before to drain');
    await running.stop();
  };

  it('reconciles existing objects again under a new version', async () => {
    const first = await env.run(firstBuild);
    for (const name of ['a', 'b'])
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Widget',
        metadata: { name },
        spec: { size: 3 },
      });
    for (const name of ['a', 'b']) assert.equal(await buildOf(name, 'one'), 'one');
    await stopDrained(first);

    // another reconcile: its source is another version
    const second = await env.run(laterBuild('two'));
    for (const name of ['a', 'b'])
      assert.equal(await buildOf(name, 'two of size 3'), 'two of size 3');
    await stopDrained(second);

    // the same source with another behaviour (here a closure's value): a version given
    const third = await env.run(laterBuild('three'), { version: '3.0.0' });
    for (const name of ['a', 'b'])
      assert.equal(await buildOf(name, 'three of size 3'), 'three of size 3');
    await third.stop();
  });

  it('tries again, under a new version, an object the version before dead-lettered', async () => {
    const failing = defineOperator({
      name: 'widgets',
      for: Widget,
      maxAttempts: 2,
      reconcile: async () => {
        await Promise.resolve();
        throw new Error('a bug the next release fixes');
      },
    });
    const first = await env.run(failing, { version: 'broken' });
    await env.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Widget',
      metadata: { name: 'parked' },
      spec: { size: 3 },
    });
    await env.waitForCondition(Widget, 'parked', { type: 'Degraded', reason: 'RetryBudgetSpent' });
    await stopDrained(first);

    // no spec change, no re-drive: the new version's sweep is what tries it again
    const fixed = await env.run(laterBuild('four'), { version: '4.0.0' });
    assert.equal(await buildOf('parked', 'four of size 3'), 'four of size 3');
    await env.waitForCondition(Widget, 'parked', { type: 'Ready' });
    await fixed.stop();
  });
});
