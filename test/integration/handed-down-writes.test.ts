// Read-your-own-writes across owners (ADR 0019) on a real nats-server: the
// own writes a reconciler records in its outcome records are what the next
// owner of a partition remembers — only its partition's, the latest per
// object, deletions as deletions — and a quiet stream costs nothing to read;
// so are the status intents it left pending in KUBEBUS_STATUS.
// The whole path against a real apiserver is read-your-own-writes.test.ts.
import {
  HandedDownWrites,
  OutcomeRecorder,
  outcomeRecordsSince,
  OwnWrites,
  StatusPublisher,
  Streams,
  subjects,
} from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import { partitionOf } from '@kubebus/shared/bus';
import type { ReconcileOutcome } from '@kubebus/shared/runtime';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  addStatusStream,
  standaloneNats,
  type StandaloneNats,
} from '../support/standalone-nats.js';
import { waitFor } from '../support/wait.js';

const CONTROLLER = 'relay';
const PARTITIONS = 8;
const silent = createLogger({ service: 'handed-down-writes-test', level: 'silent' });

const primaryNamed = (name: string) => ({
  group: 'test.kubebus.dev',
  resource: 'relays',
  namespace: 'ns',
  name,
});
const ownedOf = (name: string) => ({
  group: '',
  resource: 'configmaps',
  namespace: 'ns',
  name: `${name}-count`,
});

/** Two primaries in different partitions. */
function twoPartitions(): [string, string] {
  const first = 'a';
  for (let i = 0; ; i++) {
    const name = `b${i}`;
    if (
      partitionOf(primaryNamed(name), PARTITIONS) !== partitionOf(primaryNamed(first), PARTITIONS)
    )
      return [first, name];
  }
}

function outcome(name: string): ReconcileOutcome {
  return {
    key: primaryNamed(name),
    result: 'success',
    seconds: 0.01,
    attempt: 1,
    reconcileId: `r-${name}`,
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  };
}

describe('own writes handed down in outcome records', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  before(async () => {
    nats = await standaloneNats('handed-down');
    nc = nats.nc;
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: Streams.outcomes,
      subjects: [subjects.allOutcomes],
      num_replicas: 1,
      max_msg_size: 8 * 1024,
      allow_direct: true,
    });
    await addStatusStream(jsm);
  });

  after(async () => {
    await nats.stop();
  });

  /** Outcome records are core publishes: stored a moment after they are sent. */
  async function untilStored(records: number): Promise<void> {
    await waitFor(
      async () => (await jsm.streams.info(Streams.outcomes)).state.messages >= records,
      `${records} outcome records stored`,
      10_000,
    );
  }

  /** The outcome records of `controller`, read as on nats-server >= 2.11 or as on 2.10. */
  const recordsOf = (controller: string, batched: boolean) =>
    outcomeRecordsSince({ nc, jsm, batchVia: batched ? nc : undefined }, controller, silent);

  const nextOwner = (writes: OwnWrites, batched = true, maxRecords = 1_000) =>
    new HandedDownWrites(
      recordsOf(CONTROLLER, batched),
      writes,
      { partitions: PARTITIONS, windowMs: 60_000, maxRecords, deadlineMs: 10_000 },
      silent,
    );

  it("the next owner of a partition remembers its objects' latest own writes, and only theirs", async () => {
    const [mine, theirs] = twoPartitions();
    const partition = partitionOf(primaryNamed(mine), PARTITIONS);
    const previous = new OwnWrites();
    const recorder = new OutcomeRecorder(nc, CONTROLLER);
    const write = (name: string, resourceVersion: string, readBefore: number) => {
      previous.read(ownedOf(name), readBefore);
      previous.wrote(
        ownedOf(name),
        { metadata: { uid: `uid-${name}`, resourceVersion } },
        `/api/v1/namespaces/ns/configmaps/${name}-count`,
        primaryNamed(name),
      );
      recorder.record(outcome(name), previous.handDown(primaryNamed(name)));
    };
    write(mine, '10', 3);
    // the bus stuck at the same record before each of these two: the later one is the latest
    write(mine, '11', 5);
    write(mine, '12', 5);
    write(theirs, '20', 4);
    // a reconcile that wrote nothing hands nothing down, and changes nothing
    recorder.record(outcome(mine), previous.handDown(primaryNamed(mine)));
    await untilStored(5);

    const next = new OwnWrites();
    assert.equal(await nextOwner(next).inherit(partition), 1);
    // nats-server 2.10's way (an ordered consumer) hands down the same
    const throughConsumer = new OwnWrites();
    assert.equal(await nextOwner(throughConsumer, false).inherit(partition), 1);
    const alive = (seq: number, resourceVersion: string, name: string) => ({
      seq,
      uid: `uid-${name}`,
      resourceVersion,
    });
    // the bus at the read before the latest write: stale; the write itself: fresh
    assert.equal(next.freshness(ownedOf(mine), alive(5, '10', mine)), 'stale');
    assert.equal(next.freshness(ownedOf(mine), alive(8, '12', mine)), 'fresh');
    assert.equal(throughConsumer.freshness(ownedOf(mine), alive(5, '10', mine)), 'stale');
    assert.equal(throughConsumer.freshness(ownedOf(mine), alive(8, '12', mine)), 'fresh');
    // caught up only to the write before it: not taken for the latest
    const again = new OwnWrites();
    await nextOwner(again).inherit(partition);
    assert.equal(again.freshness(ownedOf(mine), alive(6, '11', mine)), 'unknown');
    // the other partition's object is not this owner's to judge
    assert.equal(next.freshness(ownedOf(theirs), alive(4, '19', theirs)), 'fresh');
  });

  it('hands a deletion down as a deletion', async () => {
    const name = 'swept';
    const partition = partitionOf(primaryNamed(name), PARTITIONS);
    const previous = new OwnWrites();
    previous.read(ownedOf(name), 7);
    previous.deleted(ownedOf(name), 'uid-swept', '/p', primaryNamed(name));
    new OutcomeRecorder(nc, CONTROLLER).record(
      outcome(name),
      previous.handDown(primaryNamed(name)),
    );
    await untilStored(6);
    for (const batched of [true, false]) {
      const next = new OwnWrites();
      await nextOwner(next, batched).inherit(partition);
      const record = { seq: 7, uid: 'uid-swept', resourceVersion: '30' };
      assert.equal(next.freshness(ownedOf(name), record), 'stale');
      assert.equal(next.freshness(ownedOf(name), undefined), 'fresh');
    }
  });

  it('reads nothing where the window holds no outcome record', async () => {
    for (const batched of [true, false]) {
      const handedDown = new HandedDownWrites(
        recordsOf('quiet', batched),
        new OwnWrites(),
        { partitions: PARTITIONS, windowMs: 60_000, maxRecords: 1_000, deadlineMs: 10_000 },
        silent,
      );
      assert.equal(await handedDown.inherit(0), 0);
    }
  });

  it('reads a window of many pages through direct gets, with no consumer', async () => {
    const controller = 'paged';
    const recorder = new OutcomeRecorder(nc, controller);
    const previous = new OwnWrites();
    const names = Array.from({ length: 600 }, (_, i) => `p${String(i)}`);
    const stored = (await jsm.streams.info(Streams.outcomes)).state.messages;
    for (const name of names) {
      previous.read(ownedOf(name), 1);
      previous.wrote(
        ownedOf(name),
        { metadata: { uid: `uid-${name}`, resourceVersion: '2' } },
        `/api/v1/namespaces/ns/configmaps/${name}-count`,
        primaryNamed(name),
      );
      recorder.record(outcome(name), previous.handDown(primaryNamed(name)));
    }
    await untilStored(stored + names.length);
    const inPartition = (partition: number) =>
      names.filter((name) => partitionOf(primaryNamed(name), PARTITIONS) === partition).length;
    const takeAll = async (batched: boolean) => {
      const handedDown = new HandedDownWrites(
        recordsOf(controller, batched),
        new OwnWrites(),
        { partitions: PARTITIONS, windowMs: 60_000, maxRecords: 1_000, deadlineMs: 10_000 },
        silent,
      );
      const taken: number[] = [];
      for (let partition = 0; partition < PARTITIONS; partition++)
        taken.push(await handedDown.inherit(partition));
      return taken;
    };
    const consumerRequests: string[] = [];
    const tap = nc.subscribe('$JS.API.CONSUMER.>', {
      callback: (_error, message) => {
        consumerRequests.push(message.subject);
      },
    });
    let directGets = 0;
    const gets = nc.subscribe(`$JS.API.DIRECT.GET.${Streams.outcomes}`, {
      callback: () => {
        directGets++;
      },
    });
    await nc.flush();
    const expected = Array.from({ length: PARTITIONS }, (_, partition) => inPartition(partition));
    // every partition's objects, from records read once for the round (600 in pages of 256)
    assert.deepEqual(await takeAll(true), expected);
    await nc.flush();
    gets.unsubscribe();
    assert.deepEqual(consumerRequests, []);
    assert.ok(directGets >= 3, `three pages at least, read: ${String(directGets)} requests`);
    // an ordered consumer, on nats-server 2.10, reads the same
    assert.deepEqual(await takeAll(false), expected);
    await nc.flush();
    tap.unsubscribe();
    assert.ok(consumerRequests.length > 0, 'the 2.10 way is an ordered consumer');
  });

  it("the next owner of a partition shows its objects' pending status intents as its own", async () => {
    const [mine, theirs] = twoPartitions();
    const partition = partitionOf(primaryNamed(mine), PARTITIONS);
    const taken = (key: { group: string; resource: string; namespace: string; name: string }) =>
      partitionOf(key, PARTITIONS) === partition;
    const intentOf = (name: string, count: number) => ({
      key: primaryNamed(name),
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Relay',
      uid: `uid-${name}`,
      observedGeneration: 1,
      status: { count },
    });
    // nothing pending: nothing to remember
    assert.equal(await new StatusPublisher(jetstream(nc), CONTROLLER, 16).inherit(taken), 0);

    const previous = new StatusPublisher(jetstream(nc), CONTROLLER, 16);
    await previous.publish(intentOf(mine, 2));
    await previous.publish(intentOf(theirs, 5));
    const next = new StatusPublisher(jetstream(nc), CONTROLLER, 16);
    assert.equal(await next.inherit(taken), 1);
    const before = { count: 1, observedGeneration: 1 };
    assert.deepEqual(next.own({ uid: `uid-${mine}`, generation: 1, status: before }), {
      count: 2,
      observedGeneration: 1,
    });
    // the other partition's object: not this owner's
    assert.equal(next.own({ uid: `uid-${theirs}`, generation: 1, status: before }), undefined);
  });
});
