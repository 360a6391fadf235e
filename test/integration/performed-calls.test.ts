// ctx.once's records of the external calls made (performed-calls.ts) on a
// real nats-server: what one process records another finds, per controller;
// a record past half its age is written again; one the bucket refuses is kept
// by the process that made the call; replay sees the records as they were.
import {
  Buckets,
  PERFORMED_MAX_AGE_MS,
  PerformedCalls,
  applyTopology,
  defaultTopology,
  performedAsOf,
  performedKey,
} from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import { Kvm, type KV } from '@nats-io/kv';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';
import { waitFor } from '../support/wait.js';

const silent = createLogger({ service: 'performed-calls-test', level: 'silent' });

describe('records of external calls (ctx.once)', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let kv: KV;

  before(async () => {
    nats = await standaloneNats('performed-calls');
    await applyTopology(nats.nc, defaultTopology, 'apply');
    kv = await new Kvm(nats.nc).open(Buckets.performed);
  });
  after(() => nats?.stop());

  it('is a bounded bucket whose records expire after 30 days', async () => {
    const status = await kv.status();
    assert.equal(status.ttl, PERFORMED_MAX_AGE_MS);
    assert.equal(status.history, 1);
    assert.equal(status.max_bytes, defaultTopology.limits.performedBytes);
  });

  it('finds what another process recorded, and only under its controller', async () => {
    const key = 'mailer/uid-1/welcome';
    const first = new PerformedCalls(kv, 'mailer', silent);
    assert.equal(await first.find(key), undefined);
    const before = Date.now();
    await first.record(key);
    // a restart, another replica: nothing of the first process' memory
    const second = new PerformedCalls(
      await new Kvm(nats.nc).open(Buckets.performed),
      'mailer',
      silent,
    );
    const found = await second.find(key);
    assert.ok(found !== undefined);
    assert.ok(Math.abs(found.at.getTime() - before) < 60_000, found.at.toISOString());
    // the same key under another controller is another call
    assert.equal(await new PerformedCalls(kv, 'billing', silent).find(key), undefined);
    assert.match(performedKey('mailer', key), /^mailer\.[0-9a-f]{40}$/);
    // keys no subject token could hold are recorded all the same
    const odd = 'mailer/uid-1/to: a.b@example.com > *';
    await first.record(odd);
    assert.ok((await second.find(odd)) !== undefined);
  });

  it('writes a record again when it is found past half its age', async () => {
    const maxAgeMs = 400;
    const calls = new PerformedCalls(kv, 'renewing', silent, { maxAgeMs });
    const key = 'renewing/uid-2/charge';
    await calls.record(key);
    const first = await kv.get(performedKey('renewing', key));
    assert.ok(first !== null);
    await waitFor(
      () => Promise.resolve(Date.now() - first.created.getTime() > maxAgeMs / 2),
      'the record to pass half its age',
    );
    assert.ok((await calls.find(key)) !== undefined);
    await waitFor(
      async () => ((await kv.get(performedKey('renewing', key)))?.revision ?? 0) > first.revision,
      'the record to be written again',
    );
    // a reader that may not write (replay) leaves it alone
    const renewed = await kv.get(performedKey('renewing', key));
    assert.ok(renewed !== null);
    const reader = new PerformedCalls(kv, 'renewing', silent, { maxAgeMs: 1, renew: false });
    assert.ok((await reader.find(key)) !== undefined);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await kv.get(performedKey('renewing', key)))?.revision, renewed.revision);
  });

  it('keeps in the process a record the bucket refused, and says so', async () => {
    // a bucket too small for one more record
    const tiny = await new Kvm(nats.nc).create('performed_tiny', { history: 1, max_bytes: 512 });
    const lines: string[] = [];
    const logged = createLogger({
      service: 'performed-calls-test',
      level: 'error',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const calls = new PerformedCalls(tiny, 'full', logged);
    for (let i = 0; lines.length === 0 && i < 50; i++) await calls.record(`full/uid/${String(i)}`);
    assert.equal(lines.length, 1, 'the refusal is logged once');
    const refused = JSON.parse(lines[0] ?? '{}') as { idempotencyKey: string; msg: string };
    assert.match(refused.msg, /could not be recorded on the bus/);
    assert.ok((await calls.find(refused.idempotencyKey)) !== undefined, 'kept in the process');
    assert.equal(
      await new PerformedCalls(tiny, 'full', silent).find(refused.idempotencyKey),
      undefined,
      'another process does not know of it',
    );
  });

  it('answers replay as the records were at a revision', async () => {
    const calls = new PerformedCalls(kv, 'replayed', silent);
    const key = 'replayed/uid-3/deliver';
    const earlier = new Date(Date.now() - 60_000);
    await calls.record(key);
    const later = new Date(Date.now() + 60_000);
    assert.equal(await performedAsOf(calls, earlier).find(key), undefined, 'made after it');
    assert.ok((await performedAsOf(calls, later).find(key)) !== undefined, 'made before it');
  });

  it('fails a lookup it cannot make instead of answering "not made"', async () => {
    const broken = {
      get: () => Promise.reject(new Error('no responders')),
      put: () => Promise.reject(new Error('no responders')),
    } as unknown as KV;
    await assert.rejects(new PerformedCalls(broken, 'x', silent).find('x/u/k'), /no responders/);
  });
});
