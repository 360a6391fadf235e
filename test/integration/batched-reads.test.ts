// Batched reads of KUBEBUS_EVENTS on a real nats-server: several objects in
// one direct get on the connection's shared request inbox (no subscription
// made and removed per read), answered in the order asked, absent objects as
// absent, and never a partial answer read as "not there". The reads a turn
// gathers go out in that turn's one NATS write (ADR 0027).
import {
  BatchingReader,
  IncompleteBatch,
  lastMessagesFor,
  ObjectReader,
  Streams,
  subjects,
} from '@kubebus/shared/bus';
import { classifyFailure } from '@kubebus/shared/errors';
import type { KubeObject } from '@kubebus/shared/events';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpCall } from '../bed/http.js';
import { coalesceWrites } from '../../shared/src/bus/write-coalescing.js';
import { recordRevision } from '../support/recorded-revision.js';
import { countWrites } from '../support/socket-writes.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

const resource = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const keyOf = (name: string) => ({ group: '', resource: 'configmaps', namespace: 'ns', name });

function configMap(name: string, resourceVersion: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion },
  };
}

const noObject = () => Promise.reject(new Error('no object is published by reference here'));

describe('batched reads of the recorded objects', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;

  before(async () => {
    nats = await standaloneNats('batched-reads');
    jsm = await jetstreamManager(nats.nc);
    await jsm.streams.add({
      name: Streams.events,
      subjects: [subjects.allEvents],
      num_replicas: 1,
      allow_direct: true,
    });
    for (const [name, revisions] of [
      ['a', ['1', '2']],
      ['b', ['3']],
      ['c', ['4', '5', '6']],
    ] as const)
      for (const resourceVersion of revisions) await record(name, resourceVersion);
  });

  after(async () => {
    await nats.stop();
  });

  async function record(name: string, resourceVersion: string): Promise<void> {
    await recordRevision(jsm, resource, configMap(name, resourceVersion));
  }

  /** Subscriptions nats-server has made since it started (its monitoring endpoint). */
  async function subscriptionsMade(): Promise<number> {
    const answer = await httpCall(`http://127.0.0.1:${String(nats.config.monitorPort)}/subsz`);
    return (JSON.parse(answer.body) as { num_inserts: number }).num_inserts;
  }

  it('answers each object as last recorded, in the order asked, with no subscription per read', async () => {
    const nc = await connect({ servers: nats.url });
    try {
      const reader = new ObjectReader(await jetstreamManager(nc), noObject, nc);
      const revisions = async (names: readonly string[]) =>
        (await reader.readAll(names.map(keyOf))).map((object) => object?.metadata.resourceVersion);
      // the first request subscribes the connection's shared inbox
      assert.deepEqual(await revisions(['c', 'missing', 'a', 'b']), ['6', undefined, '2', '3']);
      const before = await subscriptionsMade();
      for (let i = 0; i < 20; i++)
        assert.deepEqual(await revisions(['b', 'a', 'c']), ['3', '2', '6']);
      assert.deepEqual(await revisions(['gone', 'never']), [undefined, undefined]);
      assert.equal(await subscriptionsMade(), before, 'a subscription was made for a read');
    } finally {
      await nc.close();
    }
  });

  it('fails, rather than answer "not there", when the stream gives no answer', async () => {
    const name = 'KUBEBUS_NO_DIRECT';
    await jsm.streams.add({ name, subjects: ['nodirect.>'], allow_direct: false });
    const nc = await connect({ servers: nats.url });
    try {
      const failed = await lastMessagesFor(nc, await jetstreamManager(nc), name, [
        'nodirect.a',
        'nodirect.b',
      ]).catch((error: unknown) => error);
      assert.match(String(failed), /no stream answered \(503\)/);
      // waited out as NATS being unavailable, never charged to an object's retries
      assert.equal(classifyFailure(failed), 'transient');
    } finally {
      await nc.close();
      await jsm.streams.delete(name);
    }
  });

  it('says a batch is incomplete past what the server answers at once', async () => {
    const name = 'KUBEBUS_MANY';
    await jsm.streams.add({ name, subjects: ['many.>'], allow_direct: true });
    const nc = await connect({ servers: nats.url });
    try {
      const js = jsm.jetstream();
      await Promise.all(
        Array.from({ length: 1025 }, (_, i) => js.publish(`many.${String(i)}`, 'x')),
      );
      const reading = lastMessagesFor(nc, await jetstreamManager(nc), name, ['many.>']);
      await assert.rejects(reading, IncompleteBatch);
    } finally {
      await nc.close();
      await jsm.streams.delete(name);
    }
  });

  it("sends the reads a turn gathers in that turn's one write", async () => {
    const nc = await connect({ servers: nats.url });
    try {
      assert.equal(coalesceWrites(nc), true);
      const reader = new BatchingReader(new ObjectReader(await jetstreamManager(nc), noObject, nc));
      const writes = countWrites(nc);
      // a task publishes (nats-core asks for its write in a microtask: due at
      // the turn's end), then, a microtask later, as a reconcile's code after an
      // await, reads: the read's request must still be in that write
      const answered = await new Promise<(KubeObject | undefined)[]>((resolve, reject) => {
        setTimeout(() => {
          nc.publish('acks', 'ack');
          void Promise.resolve().then(() =>
            reader.readAll([keyOf('a'), keyOf('b')]).then(resolve, reject),
          );
        }, 0);
      });
      assert.deepEqual(
        answered.map((object) => object?.metadata.resourceVersion),
        ['2', '3'],
      );
      const first = writes.writes()[0] ?? '';
      assert.ok(
        first.includes('PUB acks') && first.includes(`$JS.API.DIRECT.GET.${Streams.events}`),
        `the ack and the read in one write: ${writes.seen()}`,
      );
    } finally {
      await nc.close();
    }
  });
});
