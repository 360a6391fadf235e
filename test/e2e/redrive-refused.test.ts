// A parked object that is re-driven and then refused — its child's name held
// by another object's child — says so on the object: its Ready stays the
// letter's (a status write would be its own change, left parked, dropping the
// re-drive's waiting retry), so the refusal is a Warning Event, once per
// generation and message. Before, only the reconciler's log said it. The
// other's child is not on the bus (it does not carry this operator's label):
// the apiserver's refusal of a second controller reference is what finds it,
// said as whose child it is and waited out, not dead-lettered as a 422.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { busRecordOf } from '../support/bus-record.js';
import { eventNotes } from '../support/event-notes.js';
import { kubebusArgs } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const Keeper = defineResource({
  group: 'redrive.test.kubebus.dev',
  version: 'v1',
  kind: 'Keeper',
  scope: 'Namespaced',
  spec: z.object({ value: z.string() }),
  status: z.object({ kept: z.boolean() }).partial(),
});

/** While set, every reconcile fails (the operator runs in this process). */
let failing = true;

const keepers = defineOperator({
  name: 'keepers',
  for: Keeper,
  owns: [kinds.ConfigMap],
  maxAttempts: 2,
  async reconcile(keeper, ctx) {
    if (failing) throw new Error('the store is not ready');
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: `kept-${keeper.metadata.name}` },
      data: { value: keeper.spec.value },
    });
    return { status: { kept: true } };
  },
});

const Minter = defineResource({
  group: 'redrive.test.kubebus.dev',
  version: 'v1',
  kind: 'Minter',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({ minted: z.string() }).partial(),
});

/** Makes its credentials once; another object's child of that name is not its own. */
const minters = defineOperator({
  name: 'minters',
  for: Minter,
  owns: [kinds.ConfigMap],
  async reconcile(minter, ctx) {
    const minted = await ctx.createOnce(kinds.ConfigMap, {
      metadata: { name: `minted-${minter.metadata.name}` },
      data: { token: 'fresh' },
    });
    return { status: { minted } };
  },
});

/** The controller of the ConfigMap whose name the Keeper's child would take. */
const OTHER_OWNER = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'other',
  uid: '6f1c1d2e-0000-4000-8000-000000000001',
  controller: true,
  blockOwnerDeletion: true,
};

const KEY = { group: Keeper.group, resource: Keeper.plural, namespace: 'default', name: 'held' };

describe('a re-driven parked object refused', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Keeper);
    await env.install(Minter);
    // a refused name is looked at again every 3 s, not 30 (KUBEBUS_CLAIM_RETRY)
    await env.run(keepers, { env: { KUBEBUS_CLAIM_RETRY: '3s' } });
    await env.run(minters);
  });
  after(() => env?.stop());

  it('says the refusal in an Event, its Ready left to the letter', async () => {
    await env.apply({
      apiVersion: 'redrive.test.kubebus.dev/v1',
      kind: 'Keeper',
      metadata: { name: 'held' },
      spec: { value: 'v' },
    });
    await env.waitForCondition(Keeper, 'held', {
      type: 'Degraded',
      reason: 'RetryBudgetSpent',
    });
    let seq = 0;
    await waitFor(async () => {
      seq = (await busRecordOf(env.natsEnv, KEY)).deadLetters[0]?.seq ?? 0;
      return seq > 0;
    }, 'the dead letter of held');
    // another object's child holds the child's name; the store is fixed meanwhile
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept-held', ownerReferences: [OTHER_OWNER] },
      data: { value: 'the other’s' },
    });
    failing = false;
    const redrive = spawnSync(process.execPath, kubebusArgs('dlq', 'redrive', String(seq)), {
      encoding: 'utf8',
      env: { ...process.env, ...env.natsEnv },
      timeout: 60_000,
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    assert.equal(redrive.status, 0, redrive.stderr);

    let notes: string[] = [];
    await waitFor(async () => {
      notes = await eventNotes(env, 'held', 'AlreadyOwned');
      return notes.length > 0;
    }, 'an AlreadyOwned Event of the re-driven held');
    // refused again at its next look (3 s later), said no second time
    await waitFor(
      async () =>
        (await busRecordOf(env.natsEnv, KEY)).outcomes.filter((o) =>
          /already controlled by Deployment other/.test(o.error ?? ''),
        ).length >= 2,
      'a second refusal of the re-driven held',
      120_000,
    );
    assert.equal(
      (await eventNotes(env, 'held', 'AlreadyOwned')).length,
      1,
      'one Event per generation and message',
    );
    // the apiserver's refusal of a second controller, said as whose child it is
    assert.match(
      notes[0] ?? '',
      /^Warning ConfigMap default\/kept-held is already controlled by Deployment other \(uid 6f1c1d2e-0000-4000-8000-000000000001\): not taken over/,
    );
    // the other's ConfigMap is neither taken over nor changed
    const others = await env.get(kinds.ConfigMap, 'kept-held');
    assert.deepEqual(others?.data, { value: 'the other’s' });
    assert.deepEqual(others?.metadata.ownerReferences, [OTHER_OWNER]);
    // and the letter's Ready stays: a write would have been left parked
    const held = await env.get(Keeper, 'held');
    const degraded = held?.status?.conditions?.find((c) => c.type === 'Degraded');
    assert.equal(degraded?.reason, 'RetryBudgetSpent');
  });

  it("does not answer 'exists' for another object's child the bus has no record of", async () => {
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'minted-taken', ownerReferences: [OTHER_OWNER] },
      data: { token: 'the other’s' },
    });
    await env.apply({
      apiVersion: 'redrive.test.kubebus.dev/v1',
      kind: 'Minter',
      metadata: { name: 'taken' },
      spec: {},
    });
    // its credentials would otherwise be read as this Minter's
    const refused = await env.waitForCondition(Minter, 'taken', {
      type: 'Ready',
      status: 'False',
      reason: 'AlreadyOwned',
    });
    assert.match(
      refused.message ?? '',
      /ConfigMap default\/minted-taken is already controlled by Deployment other/,
    );
    assert.equal((await env.get(Minter, 'taken'))?.status?.minted, undefined);
  });
});
