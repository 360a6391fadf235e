// One socket write per event-loop turn on a real nats-server: what the
// callbacks of one turn send goes out together, in order, and nothing waits
// for a timer; past nats-core's buffer limit the write is at once.
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { coalesceWrites, writesCoalesced } from '../../shared/src/bus/write-coalescing.js';
import { countWrites } from '../support/socket-writes.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

/**
 * `n` publishes, each from its own immediate: separate tasks of one check
 * phase, whatever the load (timers created a moment apart can fall in
 * different turns: node reads the clock for each).
 */
async function publishFromTasks(nc: NatsConnection, subject: string, n: number): Promise<void> {
  await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<void>((resolve) => {
          setImmediate(() => {
            nc.publish(subject, String(i));
            resolve();
          });
        }),
    ),
  );
}

/** Resolves after the immediates already queued, the coalesced write's among them. */
function endOfTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('NATS writes coalesced per event-loop turn', { timeout: 60_000 }, () => {
  let nats: StandaloneNats;
  const connections: NatsConnection[] = [];

  before(async () => {
    nats = await standaloneNats('coalescing');
  });

  after(async () => {
    for (const nc of connections) await nc.close();
    await nats.stop();
  });

  async function connection(coalesced: boolean): Promise<NatsConnection> {
    const nc = await connect({ servers: nats.url });
    connections.push(nc);
    if (coalesced) assert.equal(coalesceWrites(nc), true, 'nats-core internals as expected');
    return nc;
  }

  /** What a subscriber receives on `subject`, once `n` messages are in; fails after 10 s without them. */
  async function received(subject: string, n: number) {
    const sub = nats.nc.subscribe(subject, { max: n });
    await nats.nc.flush();
    return async () => {
      const got: string[] = [];
      const deadline = setTimeout(() => {
        sub.unsubscribe();
      }, 10_000);
      for await (const message of sub) got.push(message.string());
      clearTimeout(deadline);
      assert.equal(got.length, n, `received ${String(got.length)} of ${String(n)} messages`);
      return got;
    };
  }

  it('sends what the tasks of one turn publish in one write, all of it, in order', async () => {
    const plain = await connection(false);
    const coalesced = await connection(true);
    for (const [nc, subject] of [
      [plain, 'plain'],
      [coalesced, 'coalesced'],
    ] as const) {
      const all = await received(subject, 20);
      const writes = countWrites(nc);
      await publishFromTasks(nc, subject, 20);
      await endOfTurn();
      const withinTurn = writes.count();
      await nc.flush();
      assert.deepEqual(
        await all(),
        Array.from({ length: 20 }, (_, i) => String(i)),
      );
      if (nc === plain)
        assert.ok(withinTurn >= 20, `nats-core's own: ${String(withinTurn)} writes`);
      // the 20 publishes in one write, written in the same turn
      else assert.equal(withinTurn, 1, `coalesced: ${String(withinTurn)} writes: ${writes.seen()}`);
    }
  });

  it('patches a connection once: a second call defers nothing twice', async () => {
    const coalesced = await connection(true);
    assert.equal(coalesceWrites(coalesced), true);
    assert.equal(writesCoalesced(coalesced), true);
    const all = await received('twice', 20);
    const writes = countWrites(coalesced);
    await publishFromTasks(coalesced, 'twice', 20);
    await endOfTurn();
    // deferred twice, the write would wait for the next turn
    assert.equal(
      writes.count(),
      1,
      `${String(writes.count())} writes within the turn: ${writes.seen()}`,
    );
    await coalesced.flush();
    await all();
  });

  it('answers requests as before', async () => {
    const coalesced = await connection(true);
    const service = nats.nc.subscribe('echo', {
      callback: (_error, message) => {
        message.respond(`echo ${message.string()}`);
      },
    });
    await nats.nc.flush();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        coalesced.request('echo', String(i), { timeout: 10_000 }),
      ),
    );
    assert.deepEqual(
      answers.map((answer) => answer.string()),
      Array.from({ length: 50 }, (_, i) => `echo ${String(i)}`),
    );
    service.unsubscribe();
  });

  it("writes at once past nats-core's buffer limit, not after the turn", async () => {
    const coalesced = await connection(true);
    const all = await received('large', 1);
    const writes = countWrites(coalesced);
    coalesced.publish('large', new Uint8Array(64 * 1024));
    await Promise.resolve();
    assert.equal(writes.count(), 1, 'written within the task that filled the buffer');
    await coalesced.flush();
    assert.equal((await all()).length, 1);
  });

  it('sends what was published before a close', async () => {
    const coalesced = await connect({ servers: nats.url });
    assert.equal(coalesceWrites(coalesced), true);
    const all = await received('last', 1);
    coalesced.publish('last', 'before the close');
    await coalesced.close();
    assert.deepEqual(await all(), ['before the close']);
  });

  it('leaves a connection whose internals it does not know as it is', async () => {
    assert.equal(coalesceWrites({} as NatsConnection), false);
    const plain = await connection(false);
    assert.equal(writesCoalesced(plain), false);
  });
});
