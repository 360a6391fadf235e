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
} from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import { createLogger } from '@kubebus/shared/obs';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordRevision } from '../support/recorded-revision.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

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

describe('records of external calls (ctx.once)', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;
  let kv: KV;
  const calls = (takeoverMs?: number) =>
    PerformedCalls.of(kv, jsm, 'mailer', silent, ...(takeoverMs === undefined ? [] : [takeoverMs]));
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
    const key = 'mailer/uid-1/welcome';
    const first = calls();
    assert.equal(await first.find('uid-1', key), undefined);
    const claim = await first.claim('uid-1', key);
    assert.equal(claim.state, 'claimed');
    // another reconcile meanwhile (a moved partition, a Knative pod): the call is under way
    await assert.rejects(calls().claim('uid-1', key), CallInFlight);
    assert.equal((await calls().find('uid-1', key))?.state, 'claimed');
    await first.made('uid-1', key, 'perform', claim);
    const found = await calls().find('uid-1', key);
    assert.deepEqual(found, { state: 'made', at: claim.record.at, by: 'perform' });
    // made: a late claimant is told so, and makes nothing
    assert.equal((await calls().claim('uid-1', key)).state, 'made');
    // the same key of another life of the object is another call
    assert.equal(await calls().find('uid-2', key), undefined);
    // keys no subject token could hold are recorded all the same
    const odd = 'mailer/uid-1/to: a.b@example.com > *';
    await first.made('uid-1', odd, 'done');
    assert.equal((await calls().find('uid-1', odd))?.by, 'done');
    assert.match(performedKey('uid-1', odd), /^[0-9a-f]{32}\.[0-9a-f]{40}$/);
  });

  it('takes over an old claim once; a failed call releases its claim', async () => {
    const key = 'mailer/uid-3/charge';
    // a reconcile that stopped between its call and its record
    const stopped = await calls().claim('uid-3', key);
    const takers = [calls(0), calls(0)];
    const taken = await Promise.allSettled(takers.map((c) => c.claim('uid-3', key)));
    const won = taken.filter((t) => t.status === 'fulfilled');
    assert.equal(won.length, 1, 'one takes it over');
    const claim = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<PerformedCalls['claim']>>>)
      .value;
    assert.ok(claim.state === 'claimed' && claim.tookOver);
    assert.equal(claim.record.at, stopped.record.at, 'the first claim’s time is kept');
    // the call failed: the next try is a first claim, not a takeover
    await takers[0]?.release('uid-3', key, claim);
    const next = await calls().claim('uid-3', key);
    assert.ok(next.state === 'claimed' && !next.tookOver);
  });

  it('purges the records of an object the bus recorded deleted, and only those', async () => {
    const mailer = calls();
    await mailer.made('uid-gone', 'mailer/uid-gone/one', 'perform');
    await mailer.made('uid-gone', 'mailer/uid-gone/two', 'perform');
    await mailer.made('uid-kept', 'mailer/uid-kept/one', 'perform');
    await mailer.made('uid-new', 'mailer/uid-new/one', 'perform');
    // not recorded deleted (a read that found nothing, say): nothing goes
    await recordRevision(jsm, mails, mail('kept', 'uid-kept'), 'add');
    await mailer.forget(keyOf('kept'));
    await mailer.forget(keyOf('never-recorded'));
    assert.equal((await mailer.find('uid-kept', 'mailer/uid-kept/one'))?.state, 'made');
    // recorded deleted: that life's records go; a new life of the name is not touched
    await recordRevision(jsm, mails, mail('gone', 'uid-gone'), 'delete');
    const before = await messages();
    await mailer.forget(keyOf('gone'));
    assert.equal(await mailer.find('uid-gone', 'mailer/uid-gone/one'), undefined);
    assert.equal(await mailer.find('uid-gone', 'mailer/uid-gone/two'), undefined);
    assert.equal((await mailer.find('uid-new', 'mailer/uid-new/one'))?.state, 'made');
    assert.equal(await messages(), before - 2, 'no delete markers left behind');
  });

  it('makes no call whose claim the bucket refuses; keeps a refused record in the process', async () => {
    const tiny = await new Kvm(nats.nc).create('performed_tiny', { history: 1, max_bytes: 600 });
    const lines: string[] = [];
    const logged = createLogger({
      service: 'performed-calls-test',
      level: 'error',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const full = new PerformedCalls(tiny, undefined, logged);
    let refusedAt = -1;
    for (let i = 0; i < 50 && refusedAt < 0; i++)
      await full.claim('t', `k/${String(i)}`).catch((error: unknown) => {
        assert.ok(!(error instanceof CallInFlight), String(error));
        refusedAt = i;
      });
    assert.ok(refusedAt > 0, 'the bucket refused a claim');
    await full.made('t', 'k/made', 'perform');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /could not be recorded on the bus/);
    assert.equal((await full.find('t', 'k/made'))?.state, 'made', 'kept in the process');
    assert.equal(
      await new PerformedCalls(tiny, undefined, silent).find('t', 'k/made'),
      undefined,
      'another process does not know of it',
    );
  });

  it('answers replay as the records were at a revision', async () => {
    const mailer = calls();
    const key = 'mailer/uid-5/deliver';
    const earlier = new Date(Date.now() - 60_000);
    const claim = await mailer.claim('uid-5', key);
    // a claim alone is not a call made
    assert.equal(
      await performedAsOf(mailer, new Date(Date.now() + 60_000)).find('uid-5', key),
      undefined,
    );
    await mailer.made('uid-5', key, 'perform', claim);
    const later = new Date(Date.now() + 60_000);
    assert.equal(await performedAsOf(mailer, earlier).find('uid-5', key), undefined);
    assert.equal((await performedAsOf(mailer, later).find('uid-5', key))?.state, 'made');
    // one the receiver had (done) was made whatever the revision
    await mailer.made('uid-5', 'mailer/uid-5/asked', 'done');
    assert.equal(
      (await performedAsOf(mailer, earlier).find('uid-5', 'mailer/uid-5/asked'))?.by,
      'done',
    );
  });

  it('fails a lookup it cannot make instead of answering "not made"', async () => {
    const broken = {
      get: () => Promise.reject(new Error('no responders')),
      put: () => Promise.reject(new Error('no responders')),
    } as unknown as KV;
    await assert.rejects(
      new PerformedCalls(broken, undefined, silent).find('x', 'x/u/k'),
      /no responders/,
    );
  });
});
