// Status intents handed to the status writer of the same process (ADR 0028),
// on a real nats-server: written there when nothing of the object is pending
// on the bus, sent on the bus when the writer declines, and never written
// there while an older intent of the object — its own, or one a previous
// owner left — waits on the bus to be applied after it. The writer here is a
// recorder: what is under test is where the publisher sends each intent; the
// writer's own judging is the status writer's (test/e2e/status-handoff.test.ts).
import {
  StatusPublisher,
  Streams,
  partitionOf,
  subjects,
  type InProcessStatusWriter,
  type StatusIntent,
} from '@kubebus/shared/bus';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  addStatusStream,
  standaloneNats,
  type StandaloneNats,
} from '../support/standalone-nats.js';

const CONTROLLER = 'handoff';
const PARTITIONS = 4;

const keyOf = (name: string) => ({
  group: 'test.kubebus.dev',
  resource: 'relays',
  namespace: 'ns',
  name,
});
const intentOf = (name: string, count: number) => ({
  key: keyOf(name),
  apiVersion: 'test.kubebus.dev/v1',
  kind: 'Relay',
  uid: `uid-${name}`,
  observedGeneration: 1,
  status: { count },
});

/** A status writer of this process that writes what it is told to, and remembers what. */
class RecordingWriter implements InProcessStatusWriter {
  readonly written: StatusIntent[] = [];
  accepting = true;
  async write(intent: StatusIntent): Promise<boolean> {
    if (!this.accepting) return false;
    this.written.push(intent);
    return true;
  }
  countsOf(name: string): unknown[] {
    return this.written.filter((i) => i.key.name === name).map((i) => i.status['count']);
  }
}

describe('status intents handed over in process', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;

  before(async () => {
    nats = await standaloneNats('status-handoff');
    jsm = await jetstreamManager(nats.nc);
    await addStatusStream(jsm);
  });

  after(async () => {
    await nats.stop();
  });

  const subjectOf = (name: string) =>
    subjects.status(CONTROLLER, partitionOf(keyOf(name), PARTITIONS), keyOf(name));
  /** The intent of the object pending on the bus, or null. */
  const pendingOf = async (name: string) => {
    const stored = await jsm.streams.getMessage(Streams.status, {
      last_by_subj: subjectOf(name),
    });
    return stored === null ? null : (stored.json<StatusIntent>().status['count'] as number);
  };
  /** What a status writer consuming the bus does once it applied the intent: the ack removes it. */
  const appliedFromTheBus = async (name: string) => {
    const stored = await jsm.streams.getMessage(Streams.status, { last_by_subj: subjectOf(name) });
    assert.ok(stored, `an intent of ${name} pending`);
    await jsm.streams.deleteMessage(Streams.status, stored.seq);
  };

  it('writes in process, and nothing reaches the bus', async () => {
    const writer = new RecordingWriter();
    const publisher = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS, writer);
    const before = (await jsm.streams.info(Streams.status)).state.last_seq;
    await publisher.publish(intentOf('quiet', 1), {});
    await publisher.publish(intentOf('quiet', 2), { count: 1 });
    assert.deepEqual(writer.countsOf('quiet'), [1, 2]);
    assert.equal((await jsm.streams.info(Streams.status)).state.last_seq, before);
    // what it wrote counts as in place: the same status again is not sent anywhere
    await publisher.publish(intentOf('quiet', 2), { count: 1 });
    assert.deepEqual(writer.countsOf('quiet'), [1, 2]);
  });

  it('sends on the bus what the writer declines, and writes nothing there until the bus has applied it', async () => {
    const writer = new RecordingWriter();
    const publisher = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS, writer);
    writer.accepting = false;
    await publisher.publish(intentOf('declined', 1), {});
    assert.equal(await pendingOf('declined'), 1, 'the declined intent waits on the bus');
    writer.accepting = true;
    // a newer intent while the old one waits: on the bus too (it replaces the pending one),
    // never written here first to be overwritten by the older one afterwards
    await publisher.publish(intentOf('declined', 2), {});
    assert.deepEqual(writer.countsOf('declined'), []);
    assert.equal(await pendingOf('declined'), 2);
    await appliedFromTheBus('declined');
    await publisher.publish(intentOf('declined', 3), { count: 2 });
    assert.deepEqual(writer.countsOf('declined'), [3], 'nothing pending: written here again');
    assert.equal(await pendingOf('declined'), null);
  });

  it('sends nothing on the bus for a reconcile that may no longer write', async () => {
    const writer = new RecordingWriter();
    writer.accepting = false; // as the writer declines a write its fence refused
    const publisher = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS, writer);
    const revoked = new AbortController();
    revoked.abort(new Error('the partition was taken'));
    await assert.rejects(
      publisher.publish(
        intentOf('zombie', 1),
        {},
        {
          fence: () => {
            revoked.signal.throwIfAborted();
          },
          signal: revoked.signal,
        },
      ),
      /the partition was taken/,
    );
    assert.equal(await pendingOf('zombie'), null);
  });

  it('keeps on the bus the objects whose intents a previous owner left pending there', async () => {
    const previous = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS);
    await previous.publish(intentOf('handed', 1), {});
    assert.equal(await pendingOf('handed'), 1);
    const writer = new RecordingWriter();
    const next = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS, writer);
    const partition = partitionOf(keyOf('handed'), PARTITIONS);
    assert.equal(await next.inherit((key) => partitionOf(key, PARTITIONS) === partition), 1);
    await next.publish(intentOf('handed', 2), { count: 0 });
    assert.deepEqual(writer.countsOf('handed'), [], 'an older intent waits on the bus');
    assert.equal(await pendingOf('handed'), 2);
    // an object of the taken partition with nothing pending is written here at once
    await next.publish(intentOf('other', 1), {});
    assert.deepEqual(writer.countsOf('other'), [1]);
  });

  it('checks the bus for every object when what was pending could not be read', async () => {
    const previous = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS);
    await previous.publish(intentOf('unread', 1), {});
    const writer = new RecordingWriter();
    const next = new StatusPublisher(jetstream(nats.nc), CONTROLLER, PARTITIONS, writer);
    next.pendingUnknown(); // as on nats-server 2.10: no batched read of the pending intents
    await next.publish(intentOf('unread', 2), { count: 0 });
    assert.deepEqual(writer.countsOf('unread'), []);
    assert.equal(await pendingOf('unread'), 2);
    await next.publish(intentOf('fresh', 1), {});
    assert.deepEqual(writer.countsOf('fresh'), [1], 'nothing of it on the bus: written here');
  });
});
