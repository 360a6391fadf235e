// A finalize that must wait for something slow says so instead of throwing:
// a cluster-scoped Tenant's finalize deletes its Namespace, which a
// finalizer-held ConfigMap keeps Terminating, and returns `{ requeueAfterMs }`
// while ctx.delete answers 'terminating'. Over a wait far longer than the
// retry budget's attempts and backoffs, the Tenant is neither dead-lettered nor
// charged an attempt, keeps its finalizer and shows Ready=False/Finalizing
// with what it waits for (new at every look, yet no look starts looks at
// once for ever), and the status field it returned;
// once the hold is released the Namespace goes, and the Tenant after it.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { busRecordOf } from '../support/bus-record.js';
import { waitFor } from '../support/wait.js';

const Tenant = defineResource({
  group: 'finalize.test.kubebus.dev',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({}),
  status: z.object({ namespace: z.string(), phase: z.string() }).partial(),
});

const MAX_ATTEMPTS = 2;
const HOLD = 'test.kubebus.dev/hold';
const namespaceOf = (tenant: string) => `fw-${tenant}`;

/** What each finalize's ctx.delete answered, in order (the operator runs in this process). */
const answers: string[] = [];
/** when each finalize answered: a wait is a wait, not a spin */
const answeredAt: number[] = [];

const tenants = defineOperator({
  name: 'tenants',
  for: Tenant,
  owns: [kinds.Namespace],
  partitions: 1,
  maxAttempts: MAX_ATTEMPTS,
  async reconcile(tenant, ctx) {
    const namespace = namespaceOf(tenant.metadata.name);
    await ctx.apply(kinds.Namespace, { metadata: { name: namespace } });
    return { status: { namespace, phase: 'Active' } };
  },
  async finalize(tenant, ctx) {
    const answer = await ctx.delete(kinds.Namespace, namespaceOf(tenant.metadata.name));
    answers.push(answer);
    answeredAt.push(Date.now());
    // what it waits for, on the object meanwhile
    if (answer !== 'absent')
      return {
        requeueAfterMs: 1_000,
        // new at every look: the write of it must not start the next look at once
        message: `namespace ${namespaceOf(tenant.metadata.name)} is ${answer} (look ${String(answers.length)})`,
        status: { phase: 'Deleting' },
      };
    return undefined;
  },
});

const KEY = { group: Tenant.group, resource: Tenant.plural, namespace: '', name: 'acme' };

describe('a finalize that waits', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    // the namespace controller empties and removes a deleted Namespace
    env = await startTestEnvironment({ controllerManager: true });
    await env.install(Tenant);
    // a failing finalize would spend its budget in well under a second
    await env.run(tenants, { env: { KUBEBUS_BACKOFF_BASE: '50ms', KUBEBUS_BACKOFF_CAP: '200ms' } });
  });
  after(() => env?.stop());

  /** The Tenant's failed reconciles and dead letters, as the bus has them. */
  const recorded = async () => {
    const { outcomes, deadLetters } = await busRecordOf(env.natsEnv, KEY);
    return {
      failed: outcomes.filter((o) => o.result === 'error' || o.result === 'dead_letter'),
      attempts: Math.max(0, ...outcomes.map((o) => o.attempt)),
      deadLetters: deadLetters.length,
    };
  };

  it('keeps the Tenant without a failure while its Namespace terminates, then lets it go', async () => {
    await env.apply({
      apiVersion: 'finalize.test.kubebus.dev/v1',
      kind: 'Tenant',
      metadata: { name: 'acme' },
      spec: {},
    });
    await env.waitForCondition(Tenant, 'acme', { type: 'Ready' });
    // something of someone else's holds the namespace terminating
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'hold', namespace: namespaceOf('acme'), finalizers: [HOLD] },
      data: {},
    });
    await env.delete(Tenant, 'acme');

    // a failing finalize would be dead-lettered after 2 attempts, 200 ms apart at most
    await waitFor(
      () => answers.filter((answer) => answer === 'terminating').length >= MAX_ATTEMPTS + 4,
      `more than ${String(MAX_ATTEMPTS + 4)} finalizes of acme answered 'terminating'`,
      60_000,
    );
    // waits of 1 s asked: a look at each wait's end, and at most one more at once after
    // the write a new message makes (a change of the object; it writes nothing new, so
    // nothing follows it) — past the namespace's first changes (its controller empties it),
    // each of which a look follows too. A finalize that spun would look every few ms
    await waitFor(() => answers.length >= 16, 'sixteen finalizes of acme', 60_000);
    const gaps = answeredAt
      .slice(1)
      .map((at, i) => at - (answeredAt[i] ?? at))
      .slice(-8);
    const waited = gaps.filter((gap) => gap >= 800).length;
    assert.ok(waited * 4 >= gaps.length, `finalize waited as asked: gaps ${gaps.join(', ')} ms`);
    const seen = await recorded();
    assert.equal(seen.deadLetters, 0, 'a finalize that waits was dead-lettered');
    assert.deepEqual(seen.failed, [], 'a finalize that waits was counted a failure');
    assert.equal(seen.attempts, 1, 'a finalize that waits spent retry budget');
    const held = await env.get(Tenant, 'acme');
    assert.ok(held?.metadata.deletionTimestamp, 'being deleted');
    assert.deepEqual(held.metadata.finalizers, [tenants.finalizer], 'its finalizer kept');
    const finalizing = await env.waitForCondition(Tenant, 'acme', {
      type: 'Ready',
      status: 'False',
      reason: 'Finalizing',
    });
    assert.match(finalizing.message ?? '', /^namespace fw-acme is terminating \(look \d+\)$/);
    const shown = await env.get(Tenant, 'acme');
    assert.deepEqual(shown?.status?.phase, 'Deleting');
    assert.equal(shown?.status?.namespace, namespaceOf('acme'), 'the rest of its status kept');

    // let the namespace go: the next finalize finds it gone and releases the Tenant
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'hold', namespace: namespaceOf('acme'), finalizers: [] },
      data: {},
    });
    await env.waitFor(Tenant, 'acme', (tenant) => tenant === undefined, { timeoutMs: 60_000 });
    assert.equal(await env.get(kinds.Namespace, namespaceOf('acme')), undefined);
    assert.equal(answers.at(-1), 'absent');
    assert.equal((await recorded()).deadLetters, 0);
  });
});
