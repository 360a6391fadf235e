// One pass over a stream on a real nats-server (one-pass.ts): what it reads
// from each start, that it stops before reading too many or past a deadline,
// and that the server forgets its consumer seconds after, where nats.js'
// ordered consumer stayed five minutes for every list and history read.
import { PASS_IDLE_MS, readMessages, readOnePass, type PassMessage } from '@kubebus/shared/bus';
import { classifyFailure } from '@kubebus/shared/errors';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';
import { waitFor } from '../support/wait.js';

const STREAM = 'PASS';

describe('one pass over a stream', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;
  const text = (message: PassMessage) => new TextDecoder().decode(message.data);

  before(async () => {
    nats = await standaloneNats('one-pass');
    jsm = await jetstreamManager(nats.nc);
    await jsm.streams.add({ name: STREAM, subjects: ['pass.>'], num_replicas: 1 });
    const js = jetstream(nats.nc);
    // 1,200 messages over 600 subjects: more than one pull asks for
    for (let round = 0; round < 2; round++)
      await Promise.all(
        Array.from({ length: 600 }, (_, i) =>
          js.publish(`pass.obj.${String(i)}`, `r${String(round)}`),
        ),
      );
    await js.publish('pass.other.x', 'elsewhere');
  });

  after(() => nats.stop());

  it('reads every message, or the last of each subject, oldest first', async () => {
    const all = await readMessages(nats.nc, STREAM, 'pass.obj.>');
    assert.equal(all.length, 1_200);
    assert.ok(all.every((message, i) => i === 0 || (all[i - 1]?.seq ?? 0) < message.seq));
    const last = await readMessages(nats.nc, STREAM, 'pass.obj.>', 'last-per-subject');
    assert.equal(last.length, 600);
    assert.ok(last.every((message) => new TextDecoder().decode(message.data) === 'r1'));
  });

  it('starts at a sequence or a moment, and asks before reading too many', async () => {
    const from: string[] = [];
    assert.equal(
      await readOnePass(nats.nc, STREAM, 'pass.>', { seq: 1_200 }, (m) => from.push(text(m))),
      'read',
    );
    assert.deepEqual(from, ['r1', 'elsewhere']);
    const later: string[] = [];
    assert.equal(
      await readOnePass(nats.nc, STREAM, 'pass.>', { ms: Date.now() + 60_000 }, (m) =>
        later.push(text(m)),
      ),
      'read',
    );
    assert.deepEqual(later, []);
    let counted = -1;
    const taken: PassMessage[] = [];
    const result = await readOnePass(nats.nc, STREAM, 'pass.obj.>', 'all', (m) => taken.push(m), {
      tooMany: (pending) => {
        counted = pending;
        return pending > 1_000;
      },
    });
    assert.equal(result, 'too-many');
    assert.equal(counted, 1_200);
    assert.equal(taken.length, 0);
  });

  it('gives up at its deadline, as NATS not answering in time (transient)', async () => {
    assert.equal(
      await readOnePass(nats.nc, STREAM, 'pass.>', 'all', () => undefined, {
        deadlineAt: performance.now() - 1,
      }),
      'late',
    );
    const late = await readMessages(nats.nc, STREAM, 'pass.>', 'all', { deadlineMs: -1 }).catch(
      (error: unknown) => error,
    );
    assert.ok(late instanceof Error);
    assert.equal(classifyFailure(late), 'transient');
  });

  it('gives up at its deadline in the middle of a pull, and in time', async () => {
    const started = performance.now();
    let taken = 0;
    const result = await readOnePass(
      nats.nc,
      STREAM,
      'pass.obj.>',
      'all',
      () => {
        taken += 1;
        // a slow reader: all of the pass would take a minute
        const until = performance.now() + 50;
        while (performance.now() < until);
      },
      { deadlineAt: started + 500 },
    );
    assert.equal(result, 'late');
    assert.ok(taken < 1_200, `${String(taken)} taken`);
    assert.ok(performance.now() - started < 5_000, 'stopped near its deadline');
  });

  it('is interrupted (transient) when NATS fails it, and passes on what its reader throws', async () => {
    const missing = await readMessages(nats.nc, 'NO_SUCH_STREAM', 'x.>').catch((e: unknown) => e);
    assert.ok(missing instanceof Error);
    assert.equal(classifyFailure(missing), 'transient', String(missing));
    const mine = new TypeError('the reader’s own bug');
    await assert.rejects(
      readOnePass(nats.nc, STREAM, 'pass.obj.>', 'all', () => {
        throw mine;
      }),
      (error: unknown) => error === mine,
    );
  });

  it('leaves no consumer behind for long', async () => {
    await readMessages(nats.nc, STREAM, 'pass.obj.>', 'last-per-subject');
    const left = async () => (await jsm.consumers.list(STREAM).next()).length;
    assert.ok((await left()) >= 1, 'the passes made consumers');
    await waitFor(async () => (await left()) === 0, 'the passes’ consumers gone', PASS_IDLE_MS * 4);
  });
});
