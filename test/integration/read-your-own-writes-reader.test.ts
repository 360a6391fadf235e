// The object reader on a real nats-server's KUBEBUS_EVENTS. On a stream of
// one replica the primary's read is a direct get (the leader is the only
// server that holds the stream): no JetStream API request, the one whose
// JSON and base64 answer queued behind stream creates (issue #21).
// Read-your-own-writes (ADR 0019): a read older than this process' own write
// waits for the bus to record it, or falls back to the apiserver (here a
// recording callback: the whole path against a real apiserver is
// read-your-own-writes.test.ts); a record that comes after the own write, or
// is the own write, costs nothing more.
import {
  ObjectReader,
  OwnWrites,
  Streams,
  subjects,
  type StaleReadOutcome,
} from '@kubebus/shared/bus';
import type { ChangeOp, KubeObject } from '@kubebus/shared/events';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { natsConfig, natsUrl, startNats, type NatsConfig } from '../bed/nats.js';
import type { ServerProcess } from '../bed/process.js';
import { recordRevision } from '../support/recorded-revision.js';

const WAIT_MS = 8_000;
const resource = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const key = { group: '', resource: 'configmaps', namespace: 'ns', name: 'page' };
const PATH = '/api/v1/namespaces/ns/configmaps/page';

function configMap(resourceVersion: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'page', namespace: 'ns', uid: 'u1', resourceVersion },
    data: { rv: resourceVersion },
  };
}

describe('the object reader on a stream of one replica', { timeout: 120_000 }, () => {
  let dir: string;
  let config: NatsConfig;
  let server: ServerProcess;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubebus-ryow-'));
    config = await natsConfig(dir);
    server = await startNats(config);
    nc = await connect({ servers: natsUrl(config) });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: Streams.events,
      subjects: [subjects.allEvents],
      num_replicas: 1,
      allow_direct: true,
    });
  });

  after(async () => {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the watcher would publish for this revision; answers its stream sequence. */
  function record(resourceVersion: string, op: ChangeOp = 'update'): Promise<number> {
    return recordRevision(jsm, resource, configMap(resourceVersion), op);
  }

  function reader() {
    const writes = new OwnWrites();
    const outcomes: StaleReadOutcome[] = [];
    const gets: string[] = [];
    let apiserver = configMap('0');
    const objects = new ObjectReader(
      jsm,
      (path) => {
        gets.push(path);
        return Promise.resolve(apiserver);
      },
      undefined,
      { writes, waitMs: WAIT_MS, onStaleRead: (outcome) => outcomes.push(outcome) },
    );
    return {
      objects,
      writes,
      outcomes,
      gets,
      apiserverHas(resourceVersion: string) {
        apiserver = configMap(resourceVersion);
      },
    };
  }

  /** The reads' requests as nats-server receives them (a second connection's wiretap). */
  async function wiretap() {
    const tap = await connect({ servers: natsUrl(config) });
    const seen = { leader: 0, direct: 0 };
    tap.subscribe(`$JS.API.STREAM.MSG.GET.${Streams.events}`, {
      callback: () => {
        seen.leader++;
      },
    });
    tap.subscribe(`$JS.API.DIRECT.GET.${Streams.events}.>`, {
      callback: () => {
        seen.direct++;
      },
    });
    await tap.flush();
    return { seen, close: () => tap.close() };
  }

  it('answers the latest revision with direct gets, no leader request per read', async () => {
    const { objects } = reader();
    const tap = await wiretap();
    try {
      await record('1');
      assert.equal((await objects.read(key))?.metadata.resourceVersion, '1');
      await record('2');
      assert.equal((await objects.read(key))?.metadata.resourceVersion, '2');
      await record('2', 'delete');
      assert.equal(await objects.read(key), undefined, 'a deleted object reads as gone');
      await nc.flush();
      assert.deepEqual(tap.seen, { leader: 0, direct: 3 });
    } finally {
      await tap.close();
    }
  });

  it('answers the own write, or anything after it, with no more than the read', async () => {
    const r = reader();
    await record('10');
    await r.objects.read(key);
    r.writes.wrote(key, configMap('11'), PATH);
    await record('11');
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '11');
    await record('12'); // someone else's write after it
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '12');
    assert.deepEqual(r.outcomes, []);
    assert.deepEqual(r.gets, []);
  });

  it('waits for the bus to record the own write when it is behind', async () => {
    const r = reader();
    await record('20');
    await r.objects.read(key);
    r.writes.wrote(key, configMap('21'), PATH);
    const started = performance.now();
    const reading = r.objects.read(key);
    // the watcher publishes it a little later
    await new Promise((resolve) => setTimeout(resolve, 300));
    await record('21');
    assert.equal((await reading)?.metadata.resourceVersion, '21');
    assert.ok(
      performance.now() - started < WAIT_MS,
      'answered when the event came, not at the bound',
    );
    assert.deepEqual(r.outcomes, ['waited']);
    assert.deepEqual(r.gets, []);
  });

  it('tells a later revision of someone else from an older one by the stream, not the resourceVersion', async () => {
    const r = reader();
    await record('30');
    await r.objects.read(key);
    r.writes.wrote(key, configMap('31'), PATH);
    await record('31');
    await record('32');
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '32');
    assert.deepEqual(r.outcomes, ['superseded']);
    // known from then on: no second stream read
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '32');
    assert.deepEqual(r.outcomes, ['superseded']);
  });

  it('falls back to one GET when the bus does not catch up, then goes there at once', async () => {
    const r = reader();
    await record('40');
    await r.objects.read(key);
    r.writes.wrote(key, configMap('41'), PATH);
    r.apiserverHas('41');
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '41');
    assert.deepEqual(r.outcomes, ['fell_back']);
    assert.deepEqual(r.gets, [PATH]);
    // the bus still at the same record: no second wait
    const started = performance.now();
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '41');
    assert.ok(performance.now() - started < WAIT_MS / 2, 'no second wait');
    assert.deepEqual(r.outcomes, ['fell_back', 'fell_back']);
  });

  it('catches up without a consumer, however many reads wait', async () => {
    const tap = await connect({ servers: natsUrl(config) });
    let consumerRequests = 0;
    tap.subscribe(`$JS.API.CONSUMER.>`, {
      callback: () => {
        consumerRequests++;
      },
    });
    await tap.flush();
    try {
      const r = reader();
      await record('60');
      await r.objects.read(key);
      // twenty reads each wait for an own write the watcher publishes a little later
      for (let i = 1; i <= 20; i++) {
        r.writes.wrote(key, configMap(String(60 + i)), PATH);
        const reading = r.objects.read(key);
        await new Promise((resolve) => setImmediate(resolve));
        await record(String(60 + i));
        assert.equal((await reading)?.metadata.resourceVersion, String(60 + i));
      }
      assert.equal(r.outcomes.length, 20);
      assert.ok(r.outcomes.every((outcome) => outcome === 'waited' || outcome === 'superseded'));
      assert.deepEqual(r.gets, []);
      await tap.flush();
      assert.equal(consumerRequests, 0, 'no consumer created, asked after or fetched from');
      const consumers = await jsm.consumers.list(Streams.events).next();
      assert.deepEqual(
        consumers.map((c) => c.name),
        [],
      );
    } finally {
      await tap.close();
    }
  });

  it('catches a record older than the own write that was already seen (time travel)', async () => {
    const r = reader();
    await record('50');
    await r.objects.read(key);
    r.writes.wrote(key, configMap('51'), PATH);
    const seq = await record('51');
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '51');
    // the bus goes back to revision 50: a replica behind, or the stale perturbation
    await jsm.streams.deleteMessage(Streams.events, seq);
    r.apiserverHas('51');
    assert.equal((await r.objects.read(key))?.metadata.resourceVersion, '51');
    assert.deepEqual(r.outcomes, ['fell_back']);
  });
});
