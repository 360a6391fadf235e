// ctx.once's records of the external calls made (performed-calls.ts) on a
// real nats-server: the operator's own bucket, read from its leader; one
// claimant wins a call, a young claim of another is a call in flight, an old
// one is taken over once; what one process records another finds; the
// records of an object the bus recorded deleted are purged, and no others;
// a claim the bucket refuses makes no call, a record it refuses is kept by
// the process that made the call; replay sees the records as they were.
import {
  CallInFlight,
  PerformedCalls,
  applyBucket,
  applyTopology,
  defaultTopology,
  openOperatorBucket,
  performedAsOf,
  performedBucketConfig,
  performedBucketOf,
  performedKey,
  TooManyCalls,
  type PerformedOptions,
} from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import { createLogger } from '@kubebus/shared/obs';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordRevision } from '../support/recorded-revision.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';
import { waitFor } from '../support/wait.js';

const silent = createLogger({ service: 'performed-calls-test', level: 'silent' });
const mails = {
  group: 'test.kubebus.dev',
  version: 'v1',
  resource: 'mails',
  kind: 'Mail',
  namespaced: true,
};
const mail = (name: string, uid: string): KubeObject => ({
  apiVersion: 'test.kubebus.dev/v1',
  kind: 'Mail',
  metadata: { namespace: 'ns', name, uid, resourceVersion: '1' },
});
const keyOf = (name: string) => ({
  group: 'test.kubebus.dev',
  resource: 'mails',
  namespace: 'ns',
  name,
});
const ref = (name: string, uid: string, idempotencyKey: string) => ({
  object: keyOf(name),
  uid,
  idempotencyKey,
});

describe('records of external calls (ctx.once)', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;
  let kv: KV;
  /** Which life of each name the apiserver has now (the reconciler asks it with a GET). */
  const live = new Map<string, string>();
  const liveUid = (key: { name: string }) => Promise.resolve(live.get(key.name));
  const calls = (options: PerformedOptions = {}) =>
    PerformedCalls.of(kv, jsm, 'mailer', liveUid, silent, options);
  const messages = async () =>
    (await jsm.streams.info(`KV_${performedBucketOf('mailer')}`)).state.messages;

  before(async () => {
    nats = await standaloneNats('performed-calls');
    await applyTopology(nats.nc, defaultTopology, 'apply');
    jsm = await jetstreamManager(nats.nc);
    kv = await openOperatorBucket(
      nats.nc,
      performedBucketConfig('mailer', defaultTopology),
      silent,
    );
  });
  after(() => nats?.stop());

  it('is the operator’s own bounded bucket, read from its leader, whose records do not expire', async () => {
    const status = await kv.status();
    assert.equal(status.bucket, performedBucketOf('mailer'));
    assert.equal(status.ttl, 0);
    assert.equal(status.history, 1);
    assert.equal(status.max_bytes, defaultTopology.limits.performedBytes);
    const { config } = await jsm.streams.info(`KV_${performedBucketOf('mailer')}`);
    assert.equal(config.allow_direct, false);
    const again = await applyBucket(
      nats.nc,
      jsm,
      performedBucketConfig('mailer', defaultTopology),
      'check',
    );
    assert.equal(again.result, 'unchanged');
  });

  it('lets one claimant make a call, and another process find it made', async () => {
    const call = ref('a', 'uid-1', 'mailer/uid-1/welcome');
    const first = calls();
    assert.equal(await first.find(call), undefined);
    const claim = await first.claim(call);
    assert.equal(claim.state, 'claimed');
    // another reconcile meanwhile (a moved partition, a Knative pod): the call is under way,
    // looked at again once the claim may be taken over
    await assert.rejects(
      calls().claim(call),
      (error) => error instanceof CallInFlight && error.waitMs > 50_000,
    );
    assert.equal((await calls().find(call))?.state, 'claimed');
    await first.made(call, 'perform', claim);
    const found = await calls().find(call);
    assert.deepEqual(found, { state: 'made', at: claim.record.at, by: 'perform' });
    // made: a late claimant is told so, and makes nothing
    assert.equal((await calls().claim(call)).state, 'made');
    // the same key of another life of the object is another call
    assert.equal(await calls().find({ ...call, uid: 'uid-2' }), undefined);
    // keys no subject token could hold are recorded all the same
    const odd = ref('a', 'uid-1', 'mailer/uid-1/to: a.b@example.com > *');
    await first.made(odd, 'done');
    assert.equal((await calls().find(odd))?.by, 'done');
    assert.match(performedKey(odd), /^[0-9a-f]{24}\.[0-9a-f]{24}\.[0-9a-f]{40}$/);
  });

  it('takes over an old claim once, and the taken-over claim is young again', async () => {
    const call = ref('c', 'uid-3', 'mailer/uid-3/charge');
    // a reconcile that stopped between its call and its record, its claim older than the timeout
    const stopped = await calls().claim(call);
    const TAKEOVER_MS = 2_000;
    await waitFor(
      async () =>
        Date.now() - ((await kv.get(performedKey(call)))?.created.getTime() ?? Date.now()) >
        TAKEOVER_MS,
      'the claim to age past the timeout',
    );
    // two at once: the one that takes it over makes it young again, the other waits
    const outcomes: string[] = [];
    const count = (outcome: string) => void outcomes.push(outcome);
    const takers = [0, 1].map(() =>
      PerformedCalls.of(kv, jsm, 'mailer', liveUid, silent, { takeoverMs: TAKEOVER_MS, count }),
    );
    const taken = await Promise.allSettled(takers.map((c) => c.claim(call)));
    const won = taken.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    assert.equal(won.length, 1, 'one takes it over');
    const claim = won[0];
    assert.ok(claim?.state === 'claimed' && claim.tookOver);
    assert.equal(claim.record.at, stopped.record.at, 'replay’s time is the first claim’s');
    assert.deepEqual(outcomes.sort(), ['taken_over', 'waited'], 'counted: one takeover, one wait');
    // the taker is calling now: a third reconcile waits, whatever the first claim's time
    await assert.rejects(calls().claim(call), CallInFlight);
    // the call failed: the next try is a first claim, not a takeover
    await takers[0]?.release(call, claim);
    const next = await calls().claim(call);
    assert.ok(next.state === 'claimed' && !next.tookOver);
  });

  it('purges the records of an object the bus recorded deleted, and only those', async () => {
    const mailer = calls();
    const gone = [ref('gone', 'uid-gone', 'one'), ref('gone', 'uid-gone', 'two')];
    const kept = ref('kept', 'uid-kept', 'one');
    const newLife = ref('gone', 'uid-new', 'one');
    // a forged deletion naming another object's uid reaches none of that object's records
    const elsewhere = ref('elsewhere', 'uid-gone', 'one');
    for (const call of [...gone, kept, newLife, elsewhere]) await mailer.made(call, 'perform');
    // not recorded deleted (a read that found nothing, say): nothing goes
    await recordRevision(jsm, mails, mail('kept', 'uid-kept'), 'add');
    await mailer.forget(keyOf('kept'));
    await mailer.forget(keyOf('never-recorded'));
    assert.equal((await mailer.find(kept))?.state, 'made');
    // recorded deleted while the apiserver still has it (a forged deletion): nothing goes
    live.set('kept', 'uid-kept');
    await recordRevision(jsm, mails, mail('kept', 'uid-kept'), 'delete');
    await mailer.forget(keyOf('kept'));
    assert.equal((await mailer.find(kept))?.state, 'made', 'a forged deletion forgets nothing');
    // recorded deleted: that life's records go; a new life of the name is not touched
    await recordRevision(jsm, mails, mail('gone', 'uid-gone'), 'delete');
    const before = await messages();
    await mailer.forget(keyOf('gone'));
    for (const call of gone) assert.equal(await mailer.find(call), undefined);
    assert.equal((await mailer.find(newLife))?.state, 'made');
    assert.equal((await mailer.find(elsewhere))?.state, 'made');
    assert.equal(await messages(), before - 2, 'no delete markers left behind');
  });

  it('purges an earlier life of the name when a new one claims a call (its deletion never reconciled as gone)', async () => {
    const mailer = calls();
    const earlier = [ref('again', 'uid-old', 'one'), ref('again', 'uid-old', 'two')];
    const sameUidElsewhere = ref('other', 'uid-old', 'one');
    for (const call of [...earlier, sameUidElsewhere]) await mailer.made(call, 'perform');
    // a forged event of another uid, last on the bus, while the apiserver has the old life
    live.set('again', 'uid-old');
    await recordRevision(jsm, mails, mail('again', 'uid-forged'), 'add');
    await calls().claim(ref('again', 'uid-forged', 'one'));
    for (const call of earlier)
      assert.equal((await mailer.find(call))?.state, 'made', 'the live object keeps its records');
    await jsm.streams.purge(`KV_${performedBucketOf('mailer')}`, {
      filter: `$KV.${performedBucketOf('mailer')}.${performedKey(ref('again', 'uid-forged', 'one'))
        .split('.')
        .slice(0, 2)
        .join('.')}.>`,
    });
    // the name re-created before the deletion was reconciled: the bus' last record is the new life
    live.set('again', 'uid-new');
    await recordRevision(jsm, mails, mail('again', 'uid-new'), 'add');
    const first = ref('again', 'uid-new', 'one');
    const claim = await mailer.claim(first);
    assert.ok(claim.state === 'claimed' && !claim.tookOver, 'a first claim of the new life');
    for (const call of earlier) assert.equal(await mailer.find(call), undefined);
    assert.equal((await mailer.find(first))?.state, 'claimed', 'its own claim stays');
    assert.equal(
      (await mailer.find(sameUidElsewhere))?.state,
      'made',
      'another name is not touched',
    );
    // the new life's later claims leave its own records alone
    await mailer.made(first, 'perform', claim);
    await mailer.claim(ref('again', 'uid-new', 'two'));
    assert.equal((await mailer.find(first))?.state, 'made');
    // a claim of a life the bus no longer has last (a revoked reconcile of the old one) sweeps nothing
    const late = ref('again', 'uid-old', 'three');
    await calls().claim(late);
    assert.equal((await mailer.find(first))?.state, 'made', 'the live object keeps its records');
    assert.equal((await mailer.find(late))?.state, 'claimed');
  });

  it('makes no call whose claim the bucket refuses; keeps a refused record in the process', async () => {
    const tiny = await new Kvm(nats.nc).create('performed_tiny', { history: 1, max_bytes: 600 });
    const lines: string[] = [];
    const logged = createLogger({
      service: 'performed-calls-test',
      level: 'error',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const outcomes: string[] = [];
    const full = new PerformedCalls(tiny, undefined, logged, {
      count: (outcome) => {
        outcomes.push(outcome);
      },
    });
    let refusedAt = -1;
    for (let i = 0; i < 50 && refusedAt < 0; i++)
      await full.claim(ref('t', 't', `k/${String(i)}`)).catch((error: unknown) => {
        assert.ok(!(error instanceof CallInFlight), String(error));
        // said as what it is, with what to do
        assert.match(String(error), /ctx\.once bucket is full: .*--storage performed=/);
        refusedAt = i;
      });
    assert.ok(refusedAt > 0, 'the bucket refused a claim');
    const made = ref('t', 't', 'k/made');
    await full.made(made, 'perform');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /could not be recorded on the bus/);
    assert.equal((await full.find(made))?.state, 'made', 'kept in the process');
    assert.deepEqual(outcomes, ['refused', 'unrecorded', 'found_made']);
    assert.equal(
      await new PerformedCalls(tiny, undefined, silent).find(made),
      undefined,
      'another process does not know of it',
    );
  });

  it('refuses an object a new call past its share of the bucket, writing nothing', async () => {
    const seen: string[] = [];
    const bounded = calls({ maxPerObject: 3, count: (outcome) => void seen.push(outcome) });
    const held = ref('g', 'uid-g', 'generation/1');
    const claim = await bounded.claim(held);
    // a call whose perform threw leaves nothing that counts (no delete marker)
    const tried = ref('g', 'uid-g', 'tried');
    await bounded.release(tried, await bounded.claim(tried));
    for (const generation of [2, 3]) {
      const call = ref('g', 'uid-g', `generation/${String(generation)}`);
      await bounded.made(call, 'perform', await bounded.claim(call));
    }
    const before = await messages();
    await assert.rejects(
      bounded.claim(ref('g', 'uid-g', 'generation/4')),
      (error) =>
        error instanceof TooManyCalls &&
        /^ctx\.once\("generation\/4"\): this object has recorded 3 external calls, the most one may \(KUBEBUS_ONCE_MAX_PER_OBJECT, 3\): .*key a call by what it does/.test(
          error.message,
        ),
    );
    assert.equal(await messages(), before, 'nothing written for the refused call');
    assert.equal(seen.at(-1), 'refused');
    // what it holds is still its own: a made call is found, its own claim taken over
    assert.equal((await bounded.claim(ref('g', 'uid-g', 'generation/2'))).state, 'made');
    await assert.rejects(bounded.claim(held), CallInFlight);
    await bounded.made(held, 'perform', claim);
    // another object, and another life of this one, have shares of their own
    assert.equal((await bounded.claim(ref('h', 'uid-h', 'generation/4'))).state, 'claimed');
    assert.equal((await bounded.claim(ref('g', 'uid-g2', 'generation/4'))).state, 'claimed');
  });

  it('counts what became of each call (kubebus_once_calls_total)', async () => {
    const seen: string[] = [];
    const counted = calls({
      count: (outcome) => {
        seen.push(outcome);
      },
    });
    const call = ref('m', 'uid-m', 'one');
    const claim = await counted.claim(call);
    await assert.rejects(counted.claim(call), CallInFlight);
    await counted.made(call, 'perform', claim);
    await counted.find(call);
    const failed = ref('m', 'uid-m', 'two');
    await counted.release(failed, await counted.claim(failed));
    const asked = ref('m', 'uid-m', 'three');
    await counted.made(asked, 'done', await counted.claim(asked));
    assert.deepEqual(seen, ['waited', 'made', 'found_made', 'released', 'answered_done']);
  });

  it('answers replay as the records were at a revision', async () => {
    const mailer = calls();
    const call = ref('r', 'uid-5', 'mailer/uid-5/deliver');
    const earlier = new Date(Date.now() - 60_000);
    const claim = await mailer.claim(call);
    // a claim alone is not a call made
    assert.equal(await performedAsOf(mailer, new Date(Date.now() + 60_000)).find(call), undefined);
    await mailer.made(call, 'perform', claim);
    const later = new Date(Date.now() + 60_000);
    assert.equal(await performedAsOf(mailer, earlier).find(call), undefined);
    assert.equal((await performedAsOf(mailer, later).find(call))?.state, 'made');
    // one the receiver had (done) was made whatever the revision
    const asked = ref('r', 'uid-5', 'mailer/uid-5/asked');
    await mailer.made(asked, 'done');
    assert.equal((await performedAsOf(mailer, earlier).find(asked))?.by, 'done');
  });

  it('fails a lookup it cannot make instead of answering "not made"', async () => {
    const broken = {
      get: () => Promise.reject(new Error('no responders')),
      put: () => Promise.reject(new Error('no responders')),
    } as unknown as KV;
    await assert.rejects(
      new PerformedCalls(broken, undefined, silent).find(ref('x', 'x', 'x/u/k')),
      /no responders/,
    );
  });
});
