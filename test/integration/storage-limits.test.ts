// Bounded storage on a real nats-server (docs/security.md): every stream and
// bucket the topology creates has max_bytes, the DLQ a max_msg_size; a full
// history stream drops its oldest messages, a full work queue refuses new ones
// and the publisher waits for room — so nothing acknowledged is lost.
import {
  Buckets,
  InboxPublisher,
  OrderedPublisher,
  Streams,
  applyTopology,
  deadLetter,
  defaultStorageLimits,
  defaultTopology,
  encodeWorkMark,
  isStreamFull,
  parkMalformed,
  publishDeadLetter,
  streamConfigs,
  subjects,
  type StorageLimits,
  type TopologyOptions,
} from '@kubebus/shared/bus';
import { classifyFailure } from '@kubebus/shared/errors';
import {
  AckPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { natsConfig, natsUrl, startNats } from '../bed/nats.js';
import type { ServerProcess } from '../bed/process.js';
import { kubebusCli } from '../support/kubebus-cli.js';
import { waitFor } from '../support/wait.js';

const KiB = 1024;
const key = (name: string) => ({ group: 'g', resource: 'things', namespace: 'ns', name });

describe('bounded storage', { timeout: 180_000 }, () => {
  let dir: string;
  let server: ServerProcess;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let url: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubebus-storage-'));
    const config = await natsConfig(dir);
    url = natsUrl(config);
    server = await startNats(config);
    nc = await connect({ servers: natsUrl(config) });
    jsm = await jetstreamManager(nc);
  });

  after(async () => {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const withLimits = (limits: Partial<StorageLimits>): TopologyOptions => ({
    ...defaultTopology,
    limits: { ...defaultStorageLimits, ...limits },
  });

  it('gives every stream and bucket max_bytes and the DLQ max_msg_size, and bounds an unbounded one', async () => {
    // a topology as an earlier kubebus made it: no bounds, work queues discarding old
    for (const stream of streamConfigs(defaultTopology)) {
      const { max_bytes: _bytes, max_msg_size: _size, ...unbounded } = stream;
      await jsm.streams.add({
        ...unbounded,
        ...(stream.name === Streams.outcomes ? { max_msg_size: 8 * KiB } : {}),
        discard: DiscardPolicy.Old,
      });
    }
    await new Kvm(nc).create(Buckets.cursors, { history: 1 });
    const changes = await applyTopology(nc, defaultTopology, 'apply');
    assert.deepEqual(
      changes.find((c) => c.stream === `KV_${Buckets.cursors}`),
      { stream: `KV_${Buckets.cursors}`, result: 'updated', fields: ['max_bytes'] },
    );
    for (const name of Object.values(Streams))
      assert.ok(
        changes.find((c) => c.stream === name)?.fields?.includes('max_bytes'),
        `${name}: ${JSON.stringify(changes)}`,
      );
    for (const stream of [
      ...Object.values(Streams),
      ...Object.values(Buckets).map((b) => `KV_${b}`),
    ]) {
      const { config } = await jsm.streams.info(stream);
      assert.ok(config.max_bytes > 0, `${stream} is unbounded`);
    }
    const dlq = (await jsm.streams.info(Streams.deadLetters)).config;
    assert.equal(dlq.max_msg_size, defaultStorageLimits.deadLetterBytes);
    const work = (await jsm.streams.info(Streams.work)).config;
    assert.equal(work.discard, DiscardPolicy.New);
  });

  it('leaves the sizes the topology step chose to it: a service only checks that there is a bound', async () => {
    const sized = withLimits({ eventsBytes: 2 * 1024 ** 3 });
    assert.equal(
      (await applyTopology(nc, sized, 'apply')).find((c) => c.stream === Streams.events)?.result,
      'updated',
    );
    // a service starts with the defaults: it neither reports nor rewrites the size
    const atStart = await applyTopology(nc, defaultTopology, 'where-allowed');
    assert.deepEqual(
      atStart.filter((c) => c.result !== 'unchanged'),
      [],
      JSON.stringify(atStart),
    );
    assert.equal((await jsm.streams.info(Streams.events)).config.max_bytes, 2 * 1024 ** 3);
    assert.equal(
      (await applyTopology(nc, defaultTopology, 'check')).find((c) => c.stream === Streams.events)
        ?.result,
      'differs',
    );
  });

  it('sizes streams and buckets with `kubebus topology apply --storage`; a run without it keeps them', async () => {
    const MiB = 1024 * KiB;
    const operator = fileURLToPath(
      new URL('../../examples/databasecluster/operator.ts', import.meta.url),
    );
    const topology = (...args: string[]) => kubebusCli(['topology', ...args, '--server', url], {});
    const performed = 'KV_kubebus_performed_databasecluster';
    const maxBytes = async (stream: string) => (await jsm.streams.info(stream)).config.max_bytes;
    const sizes = '--storage=events=512MiB, buckets=2Mi,performed=1MiB';
    const applied = await topology('apply', operator, sizes);
    assert.equal(applied.status, 0, applied.stderr);
    assert.equal(await maxBytes(Streams.events), 512 * MiB);
    assert.equal(await maxBytes(`KV_${Buckets.cursors}`), 2 * MiB);
    assert.equal(await maxBytes(performed), 1 * MiB);
    const same = await topology('check', operator, sizes);
    assert.equal(same.status, 0, same.stdout + same.stderr);
    // another operator's topology step, or a Helm upgrade, without the flag: the sizes stay
    const again = await topology('apply', operator);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(await maxBytes(Streams.events), 512 * MiB);
    assert.equal(await maxBytes(performed), 1 * MiB);
    assert.equal((await topology('check', operator)).status, 0);
    // checked against other sizes, the ones named differ, and only those
    const other = await topology('check', operator, '--storage=events=1GiB', '-o', 'json');
    assert.equal(other.status, 1, other.stderr);
    const differing = (JSON.parse(other.stdout) as { stream: string; result: string }[])
      .filter(({ result }) => result === 'differs')
      .map(({ stream }) => stream);
    assert.deepEqual(differing, [Streams.events], other.stdout);
    // a bucket (discard new) made smaller than what it holds would refuse every put: refused
    const cursors = await new Kvm(nc).open(Buckets.cursors);
    for (let i = 0; i < 40; i++) await cursors.put(`filler.${String(i)}`, new Uint8Array(32 * KiB));
    const shrunk = await topology('apply', '--storage=buckets=1MiB');
    assert.equal(shrunk.status, 1, shrunk.stdout);
    assert.match(shrunk.stderr, /KV_kubebus_cursors holds 1\.\d MiB, more than the 1\.0 MiB asked/);
    assert.equal(await maxBytes(`KV_${Buckets.cursors}`), 2 * MiB);
    // the same from a bucket an earlier kubebus left unbounded: any bound is a shrink there
    const unbounded = (await jsm.streams.info(`KV_${Buckets.cursors}`)).config;
    await jsm.streams.update(unbounded.name, { ...unbounded, max_bytes: -1 });
    const fromUnbounded = await topology('apply', '--storage=buckets=1MiB');
    assert.equal(fromUnbounded.status, 1, fromUnbounded.stdout);
    assert.match(
      fromUnbounded.stderr,
      /KV_kubebus_cursors holds 1\.\d MiB, more than the 1\.0 MiB/,
    );
    assert.equal(await maxBytes(`KV_${Buckets.cursors}`), -1);
    await jsm.streams.purge(`KV_${Buckets.cursors}`, { filter: '$KV.kubebus_cursors.filler.>' });
    // what it cannot read is one line, before anything is asked of NATS
    const wrong = await topology('apply', '--storage', 'events=lots');
    assert.equal(wrong.status, 2);
    assert.equal(wrong.stderr.trim().split('\n').length, 1, wrong.stderr);
    assert.match(wrong.stderr, /--storage: events=lots: expected events=<size>/);
    const orphan = await topology('apply', '--storage=performed=8MiB');
    assert.equal(orphan.status, 2);
    assert.match(orphan.stderr, /name the operator module/);
  });

  it('keeps dead letters small: reasons and payloads are cut, and a larger message is refused', async () => {
    await applyTopology(nc, defaultTopology, 'apply');
    const js = jetstream(nc);
    await publishDeadLetter(
      js,
      deadLetter({
        origin: 'reconciler',
        key: key('huge-reason'),
        reason: 'r'.repeat(1024 * KiB),
        code: 'KUBEBUS_RECONCILE_FAILED',
        attempts: 1,
      }),
    );
    await parkMalformed(
      js,
      'reconciler',
      { subject: subjects.work('c', 0, key('huge-payload')), data: new Uint8Array(1024 * KiB) },
      'malformed work mark',
    );
    await assert.rejects(
      js.publish(subjects.deadLetter('sink', key('raw')), new Uint8Array(200 * KiB)),
      /message size exceeds maximum allowed/,
    );
    assert.equal((await jsm.streams.info(Streams.deadLetters)).state.messages, 2);
  });

  describe('at a tiny max_bytes', () => {
    before(async () => {
      for (const stream of [Streams.events, Streams.work]) await jsm.streams.purge(stream);
      await applyTopology(nc, withLimits({ eventsBytes: 8 * KiB, workBytes: 4 * KiB }), 'apply');
    });

    it('a history stream drops its oldest messages and takes every new one', async () => {
      const js = jetstream(nc);
      for (let i = 0; i < 60; i++)
        await js.publish(subjects.event(key(`obj-${i}`)), new Uint8Array(400));
      const { state } = await jsm.streams.info(Streams.events);
      assert.ok(state.bytes <= 8 * KiB, String(state.bytes));
      assert.ok(state.first_seq > 1, 'nothing was dropped');
      const last = await jsm.streams.getMessage(Streams.events, {
        last_by_subj: subjects.event(key('obj-59')),
      });
      assert.ok(last !== null, 'the newest message is missing');
    });

    it('a work queue refuses new marks when full; the publisher waits for room; nothing acked is lost', async () => {
      const js = jetstream(nc);
      const mark = (name: string) => ({
        subject: subjects.work('c', 0, key(name)),
        payload: encodeWorkMark({
          key: key(name),
          reason: 'watch',
          time: new Date().toISOString(),
        }),
        headers: {},
        msgId: name,
      });
      // fill it, then see a direct publish refused as full
      let filled = 0;
      for (; ; filled++) {
        try {
          await js.publish(mark(`fill-${filled}`).subject, mark(`fill-${filled}`).payload);
        } catch (error) {
          assert.ok(isStreamFull(error), String(error));
          // a reconcile whose status write meets a full stream waits it out, unbudgeted
          assert.equal(classifyFailure(error), 'transient');
          break;
        }
        assert.ok(filled < 1_000, 'the work queue never filled');
      }
      assert.ok(filled > 0);
      // the watcher's publisher with it full: retried, not given up after maxRejections
      let retries = 0;
      const publisher = new OrderedPublisher(new InboxPublisher(nc), {
        maxInFlight: 64,
        retry: { baseMs: 20, capMs: 100 },
        ackTimeoutMs: 5_000,
        maxRejections: 2,
        onRetry: () => {
          retries++;
        },
      });
      const names = Array.from({ length: 40 }, (_, i) => `late-${i}`);
      const submitted = await Promise.all(
        names.map((name) => publisher.submit(name, [mark(name)])),
      );
      const completions = submitted.map(({ completion }) => completion);
      await waitFor(() => retries > names.length, 'the publisher to be refused and retry');
      // a reconciler acks what is pending: room comes, every mark gets in
      await jsm.consumers.add(Streams.work, {
        durable_name: 'drain',
        ack_policy: AckPolicy.Explicit,
        filter_subject: subjects.workOfPartition('c', 0),
      });
      const consumer = await js.consumers.get(Streams.work, 'drain');
      const seen = new Set<string>();
      const messages = await consumer.consume();
      const draining = (async () => {
        for await (const message of messages) {
          seen.add(message.subject);
          message.ack();
          if (names.every((name) => seen.has(mark(name).subject))) break;
        }
      })();
      await Promise.all(completions);
      await draining;
      await messages.close();
      for (const name of [...names, ...Array.from({ length: filled }, (_, i) => `fill-${i}`)])
        assert.ok(seen.has(mark(name).subject), `${name} was lost`);
    });
  });
});
