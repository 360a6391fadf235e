// The watcher's publishes acknowledged on an inbox of their own, against a
// real nats-server: stored with their sequence, a repeated id reported as a
// duplicate, a stream's refusal a JetStreamApiError (a full stream still
// recognized as full), no stream and no answer plain errors, a closed
// connection failing what waits.
import { DiscardPolicy, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { classifyFailure } from '@kubebus/shared/errors';
import { InboxPublisher } from '../../shared/src/bus/inbox-publisher.js';
import { isStreamFull } from '../../shared/src/bus/topology-limits.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

const payload = new TextEncoder().encode('{"kind":"Mark"}');

describe('JetStream publishes acknowledged on their own inbox', { timeout: 60_000 }, () => {
  let nats: StandaloneNats;
  let publisher: InboxPublisher;

  before(async () => {
    nats = await standaloneNats('inbox-publisher');
    const jsm = await jetstreamManager(nats.nc);
    await jsm.streams.add({ name: 'STORED', subjects: ['stored.>'], duplicate_window: 60e9 });
    await jsm.streams.add({
      name: 'SMALL',
      subjects: ['small.>'],
      max_msgs: 2,
      discard: DiscardPolicy.New,
    });
    // a core subscriber that never answers: the publish has a responder but no stream
    nats.nc.subscribe('silent.>', { callback: () => undefined });
    await nats.nc.flush();
    publisher = new InboxPublisher(nats.nc);
  });

  after(async () => {
    await nats.stop();
  });

  it('stores each message once per id, in order, with its headers', async () => {
    const hdrs = headers();
    hdrs.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const acks = await Promise.all(
      ['a', 'b', 'c'].map((id) =>
        publisher.publish(`stored.${id}`, payload, {
          msgID: `id-${id}`,
          headers: hdrs,
          timeout: 5_000,
        }),
      ),
    );
    assert.deepEqual(
      acks.map((ack) => [ack.stream, ack.seq, ack.duplicate]),
      [
        ['STORED', 1, false],
        ['STORED', 2, false],
        ['STORED', 3, false],
      ],
    );
    const again = await publisher.publish('stored.a', payload, { msgID: 'id-a', timeout: 5_000 });
    assert.deepEqual([again.seq, again.duplicate], [1, true]);
    const jsm = await jetstreamManager(nats.nc);
    const stored = await jsm.streams.getMessage('STORED', { seq: 1 });
    assert.ok(stored !== null);
    assert.equal(stored.header.get('Nats-Msg-Id'), 'id-a');
    assert.equal(stored.header.get('traceparent'), hdrs.get('traceparent'));
    assert.equal((await jsm.streams.info('STORED')).state.messages, 3);
  });

  it("reports a stream's refusal as JetStream's own error, a full stream as full", async () => {
    await publisher.publish('small.1', payload, { msgID: 's1', timeout: 5_000 });
    await publisher.publish('small.2', payload, { msgID: 's2', timeout: 5_000 });
    const refused = await publisher
      .publish('small.3', payload, { msgID: 's3', timeout: 5_000 })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(refused instanceof JetStreamApiError, String(refused));
    assert.ok(isStreamFull(refused), refused.message);
  });

  it('fails at once where no stream listens, and after its timeout where nothing answers', async () => {
    const started = performance.now();
    await assert.rejects(
      publisher.publish('nowhere.x', payload, { msgID: 'n1', timeout: 20_000 }),
      /no JetStream stream stored nowhere\.x: 503/,
    );
    assert.ok(performance.now() - started < 10_000, 'the 503 answers, not the timeout');
    await assert.rejects(
      publisher.publish('silent.x', payload, { msgID: 'q1', timeout: 300 }),
      /no acknowledgement from JetStream for silent\.x in time/,
    );
    // a late answer to a timed-out publish is dropped; the next publish is unaffected
    const ack = await publisher.publish('stored.d', payload, { msgID: 'id-d', timeout: 5_000 });
    assert.equal(ack.duplicate, false);
  });

  it('fails what still waits when its connection closes, and what comes after', async () => {
    const nc = await connect({ servers: nats.url });
    const own = new InboxPublisher(nc);
    const waiting = own.publish('silent.y', payload, { msgID: 'c1', timeout: 30_000 });
    await nc.flush();
    await nc.close();
    await assert.rejects(waiting, /the NATS connection closed before an answer/);
    // and what comes after, waited out as NATS being unavailable
    const after = await own.publish('stored.e', payload, { msgID: 'c2', timeout: 5_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(after instanceof Error, 'a publish on a closed connection fails');
    assert.equal(classifyFailure(after), 'transient', after.message);
  });
});
