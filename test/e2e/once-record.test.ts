// ctx.once without `done` makes its call once per object and key: the record
// of the call on the bus (performed-calls.ts) holds across later reconciles
// (spec changes, its own status writes), a restart of the operator, and
// replay, which answers each revision as the records were then. Before it,
// every reconcile that reached ctx.once made the call again (a newcomer's
// webhook operator made ~20 calls a second).
import { defineOperator, defineResource } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import deliveries, { Delivery, made } from '../support/operators/deliveries.js';
import { kubebusCli } from '../support/kubebus-cli.js';
import { waitFor } from '../support/wait.js';
import { performedBucketOf, performedKey } from '@kubebus/shared/bus';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { connectionOf } from '@kubebus/cli/commands';
import { z } from 'zod';

/** A call keyed by the round: each spec change is a new one, until the object's share is spent. */
const Bulletin = defineResource({
  group: 'once.test.kubebus.dev',
  version: 'v1',
  kind: 'Bulletin',
  scope: 'Namespaced',
  spec: z.object({ round: z.int() }),
  status: z.object({ round: z.int() }).partial(),
});
const posted: string[] = [];
const bulletins = defineOperator({
  name: 'bulletins',
  for: Bulletin,
  async reconcile(bulletin, ctx) {
    await ctx.once(`post-${String(bulletin.spec.round)}`, {
      perform: (key) => {
        posted.push(key);
        return Promise.resolve();
      },
    });
    return { status: { round: bulletin.spec.round } };
  },
});

const OPERATOR_FILE = fileURLToPath(new URL('../support/operators/deliveries.ts', import.meta.url));

describe('ctx.once remembers the calls it made', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Delivery);
    await env.install(Bulletin);
  });
  after(() => env?.stop());

  const delivery = (name: string, round: number) => ({
    apiVersion: 'once.test.kubebus.dev/v1',
    kind: 'Delivery',
    metadata: { name },
    spec: { round },
  });
  /** The object once a reconcile of `round` answered `answer`; its uid. */
  const reconciledAt = async (name: string, round: number, answer: 'performed' | 'done') => {
    const seen = await env.waitFor(
      Delivery,
      name,
      (d) => d?.status?.round === round && d.status.answer === answer,
    );
    assert.ok(seen !== undefined);
    return seen.metadata.uid;
  };
  const callsOf = (uid: string) =>
    made.filter((key) => key === `deliveries/${uid}/announce`).length;

  it('makes each object’s call once, across changes and a restart', async () => {
    const first = await env.run(deliveries);
    await env.apply(delivery('welcome', 1));
    // its own status write reconciles it again: that one finds the call made
    const uid = await reconciledAt('welcome', 1, 'done');
    assert.equal(callsOf(uid), 1, made.join('\n'));

    await env.apply(delivery('welcome', 2));
    await reconciledAt('welcome', 2, 'done');
    assert.equal(callsOf(uid), 1, 'a spec change does not call again');

    // a new process remembers nothing of the last one's: the bus does
    await first.stop();
    await env.run(deliveries);
    await env.apply(delivery('welcome', 3));
    await reconciledAt('welcome', 3, 'done');
    assert.equal(callsOf(uid), 1, 'a restarted operator does not call again');

    // another object is another call
    await env.apply(delivery('farewell', 1));
    const other = await reconciledAt('farewell', 1, 'done');
    assert.equal(callsOf(other), 1);
    assert.equal(made.length, 2, made.join('\n'));

    // deleted, its record goes with it; the other object's stays
    const nc = await connect(connectionOf({}, env.natsEnv).options);
    try {
      const kv = await new Kvm(nc).open(performedBucketOf('deliveries'));
      const recordOf = async (objectUid: string) =>
        kv.get(
          performedKey({
            object: {
              group: 'once.test.kubebus.dev',
              resource: 'deliveries',
              namespace: 'default',
              name: objectUid === uid ? 'welcome' : 'farewell',
            },
            uid: objectUid,
            idempotencyKey: `deliveries/${objectUid}/announce`,
          }),
        );
      assert.equal((await recordOf(other))?.operation, 'PUT');
      await env.delete(Delivery, 'farewell');
      await waitFor(async () => (await recordOf(other)) === null, 'its record to be purged');
      assert.equal((await recordOf(uid))?.operation, 'PUT');
    } finally {
      await nc.close();
    }
  });

  it('refuses an object a new call past its share of the bucket, and says so on it', async () => {
    await env.run(bulletins, { env: { KUBEBUS_ONCE_MAX_PER_OBJECT: '2' } });
    const bulletin = (name: string, round: number) => ({
      apiVersion: 'once.test.kubebus.dev/v1',
      kind: 'Bulletin',
      metadata: { name },
      spec: { round },
    });
    for (const round of [1, 2]) {
      await env.apply(bulletin('board', round));
      await env.waitFor(Bulletin, 'board', (b) => b?.status?.round === round);
    }
    await env.apply(bulletin('board', 3));
    const refused = await env.waitForCondition(Bulletin, 'board', {
      type: 'Ready',
      status: 'False',
      reason: 'TerminalError',
    });
    assert.equal(refused.observedGeneration, 3);
    assert.match(
      refused.message,
      /has recorded 2 external calls, the most one may \(KUBEBUS_ONCE_MAX_PER_OBJECT, 2\)/,
    );
    assert.deepEqual(
      posted.map((key) => key.split('/').at(-1)),
      ['post-1', 'post-2'],
      'no call past the share',
    );
    // another object has a share of its own
    await env.apply(bulletin('other', 1));
    await env.waitFor(Bulletin, 'other', (b) => b?.status?.round === 1);
    assert.equal(posted.length, 3, posted.join('\n'));
  });

  it('replays each revision as the records were then: no false alarm', async () => {
    const result = await kubebusCli(['replay', OPERATOR_FILE, 'default/welcome'], {
      ...env.natsEnv,
      KUBECONFIG: env.kubeconfigPath,
    });
    // the first revision's reconcile made the call ('performed'), later ones found it
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /: status same as recorded$/m);
    assert.doesNotMatch(result.stdout, /differs/);
    assert.equal(made.length, 2, 'replay makes no call');
  });

  it('replays a name re-created as its live object, the earlier one named and not replayed', async () => {
    // 'farewell' was deleted above: made again, it is another object with a call of its own
    const before = made.length;
    await env.apply(delivery('farewell', 2));
    const uid = await reconciledAt('farewell', 2, 'done');
    assert.equal(callsOf(uid), 1);
    assert.equal(made.length, before + 1);
    const result = await kubebusCli(['replay', OPERATOR_FILE, 'default/farewell'], {
      ...env.natsEnv,
      KUBECONFIG: env.kubeconfigPath,
    });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    // the first object's revisions: named, not sent to today's object (a 422 on its uid before)
    assert.match(
      result.stdout,
      /^#\d+ add rv \d+ generation 1: an earlier object of this name \(uid [-0-9a-f]+\), deleted since: not replayed/m,
    );
    assert.match(result.stdout, /^#\d+ delete rv \d+ .*an earlier object of this name/m);
    assert.doesNotMatch(result.stdout, /422|Invalid|differs|would create/);
    assert.match(result.stdout, /: status same as recorded$/m);
    assert.equal(made.length, before + 1, 'replay makes no call');
  });
});
