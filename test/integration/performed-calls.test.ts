// ctx.once's records of the external calls made (performed-calls.ts) on a
// real nats-server: the operator's own bucket, made by the topology step with
// its consumers; what one process records another finds; a gone object's
// records purged without touching another's; a claim the bucket refuses
// makes no call, a record it refuses is kept by the process that made the
// call; replay sees the records as they were at a revision.
import {
  PerformedCalls,
  applyBucket,
  defaultTopology,
  openOperatorBucket,
  performedAsOf,
  performedBucketConfig,
  performedBucketOf,
  performedKey,
} from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

const silent = createLogger({ service: 'performed-calls-test', level: 'silent' });
const object = (name: string) => ({
  group: 'test.kubebus.dev',
  resource: 'mails',
  namespace: 'ns',
  name,
});

describe('records of external calls (ctx.once)', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;
  let kv: KV;
  const calls = () => PerformedCalls.of(kv, jsm, 'mailer', silent);

  before(async () => {
    nats = await standaloneNats('performed-calls');
    jsm = await jetstreamManager(nats.nc);
    kv = await openOperatorBucket(
      nats.nc,
      performedBucketConfig('mailer', defaultTopology),
      silent,
    );
  });
  after(() => nats?.stop());

  it('is the operator’s own bucket, bounded, whose records do not expire', async () => {
    const status = await kv.status();
    assert.equal(status.bucket, performedBucketOf('mailer'));
    assert.equal(status.ttl, 0);
    assert.equal(status.history, 1);
    assert.equal(status.max_bytes, defaultTopology.limits.performedBytes);
    // the topology step finds it as it made it
    const again = await applyBucket(
      nats.nc,
      jsm,
      performedBucketConfig('mailer', defaultTopology),
      'check',
    );
    assert.equal(again.result, 'unchanged');
  });

  it('finds what another process claimed and made, by object and key', async () => {
    const first = calls();
    const key = 'mailer/uid-1/welcome';
    assert.equal(await first.find(object('a'), key), undefined);
    const claimed = await first.claim(object('a'), key);
    // a process that stops here leaves a claim: the next one knows the call may be made
    assert.equal((await calls().find(object('a'), key))?.state, 'claimed');
    await first.made(object('a'), key, 'perform', claimed);
    const found = await calls().find(object('a'), key);
    assert.deepEqual(found, { state: 'made', at: claimed.at, by: 'perform' });
    // the same key of another object is another call
    assert.equal(await calls().find(object('b'), key), undefined);
    // keys no subject token could hold are recorded all the same
    const odd = 'mailer/uid-1/to: a.b@example.com > *';
    await first.made(object('a'), odd, 'done');
    assert.equal((await calls().find(object('a'), odd))?.by, 'done');
    assert.match(performedKey(object('a'), odd), /^[0-9a-f]{32}\.[0-9a-f]{40}$/);
  });

  it('purges a gone object’s records, and only its', async () => {
    const mailer = calls();
    for (const key of ['mailer/uid-2/one', 'mailer/uid-3/two'])
      await mailer.made(object('gone'), key, 'perform');
    await mailer.made(object('kept'), 'mailer/uid-4/one', 'perform');
    const before = (await jsm.streams.info(`KV_${performedBucketOf('mailer')}`)).state.messages;
    await mailer.forget(object('gone'));
    assert.equal(await mailer.find(object('gone'), 'mailer/uid-2/one'), undefined);
    assert.equal(await mailer.find(object('gone'), 'mailer/uid-3/two'), undefined);
    assert.equal((await mailer.find(object('kept'), 'mailer/uid-4/one'))?.state, 'made');
    // nothing left behind: no delete markers
    const afterPurge = (await jsm.streams.info(`KV_${performedBucketOf('mailer')}`)).state.messages;
    assert.equal(afterPurge, before - 2);
  });

  it('makes no call whose claim the bucket refuses; keeps a refused record in the process', async () => {
    // a bucket too small for one more record
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
      await full.claim(object('t'), `k/${String(i)}`).catch(() => (refusedAt = i));
    assert.ok(refusedAt > 0, 'the bucket refused a claim');
    // the record of a call made: refused, kept here, said once
    await full.made(object('t'), 'k/made', 'perform');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /could not be recorded on the bus/);
    assert.equal((await full.find(object('t'), 'k/made'))?.state, 'made', 'kept in the process');
    assert.equal(
      await new PerformedCalls(tiny, undefined, silent).find(object('t'), 'k/made'),
      undefined,
      'another process does not know of it',
    );
  });

  it('answers replay as the records were at a revision', async () => {
    const mailer = calls();
    const key = 'mailer/uid-5/deliver';
    const earlier = new Date(Date.now() - 60_000);
    const claimed = await mailer.claim(object('r'), key);
    await mailer.made(object('r'), key, 'perform', claimed);
    const later = new Date(Date.now() + 60_000);
    assert.equal(await performedAsOf(mailer, earlier).find(object('r'), key), undefined);
    assert.equal((await performedAsOf(mailer, later).find(object('r'), key))?.state, 'made');
    // one the receiver had (done) was made whatever the revision
    await mailer.made(object('r'), 'mailer/uid-5/asked', 'done');
    assert.equal(
      (await performedAsOf(mailer, earlier).find(object('r'), 'mailer/uid-5/asked'))?.by,
      'done',
    );
  });

  it('fails a lookup it cannot make instead of answering "not made"', async () => {
    const broken = {
      get: () => Promise.reject(new Error('no responders')),
      put: () => Promise.reject(new Error('no responders')),
    } as unknown as KV;
    await assert.rejects(
      new PerformedCalls(broken, undefined, silent).find(object('x'), 'x/u/k'),
      /no responders/,
    );
  });
});
