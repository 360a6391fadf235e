// How a batched direct get's answers end: the statuses nats-server sends,
// fed through a stand-in for the shared inbox (the whole path on a real
// server: test/integration/batched-reads.test.ts).
import { headers, type Msg, type MsgHdrs } from '@nats-io/nats-core';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFailure } from '../errors/failure-class.js';
import { answeringWith } from './inbox-requests.test-support.js';
import { directBatch, directGet, IncompleteBatch, lastMessagesFor } from './last-messages.js';

function stored(subject: string, seq: number): Msg {
  const h = headers();
  // a header of the stored message named as the server's own: the server's comes last
  h.set('Nats-Subject', 'the-stored-message-s-own');
  h.append('Nats-Subject', subject);
  h.set('Nats-Sequence', String(seq));
  return { headers: h, data: new TextEncoder().encode(`{"seq":${String(seq)}}`) } as Msg;
}

function status(code: number, description: string, pending?: number): Msg {
  const h: MsgHdrs = headers(code, description);
  if (pending !== undefined) h.set('Nats-Num-Pending', String(pending));
  return { headers: h, data: new Uint8Array() } as Msg;
}

/** The shared inbox, answering `messages` and then, unless ended by them, nothing more (the timer's end). */
function answering(messages: readonly Msg[]) {
  return {
    nc: answeringWith(messages),
    jsm: { getOptions: () => ({ apiPrefix: '$JS.API', timeout: 5_000 }) },
  };
}

async function read(messages: readonly Msg[]) {
  const { nc, jsm } = answering(messages);
  const found = await lastMessagesFor(nc, jsm, 'S', ['s.a', 's.b']);
  return [...found.values()].map(({ subject, seq }) => `${subject}@${String(seq)}`);
}

describe('a batched direct get on the shared inbox', () => {
  it('answers what came before the end of the batch, by the server-set subject', async () => {
    assert.deepEqual(await read([stored('s.a', 3), stored('s.b', 7), status(204, 'EOB', 0)]), [
      's.a@3',
      's.b@7',
    ]);
  });

  it('answers nothing when no subject holds a message', async () => {
    assert.deepEqual(await read([status(404, 'No Results')]), []);
  });

  it('fails when a message after others could not be loaded, not answer the rest as absent', async () => {
    await assert.rejects(read([stored('s.a', 3), status(404, 'Message Not Found')]), /404/);
  });

  it('fails as incomplete when the batch was cut short or had too many results', async () => {
    await assert.rejects(read([stored('s.a', 3), status(204, 'EOB', 1)]), IncompleteBatch);
    await assert.rejects(read([status(413, 'Too Many Results')]), IncompleteBatch);
  });

  it('fails when the batch does not end (the timer stopped it)', async () => {
    await assert.rejects(read([stored('s.a', 3)]), /did not end within 5000 ms/);
  });

  it('fails on any other status', async () => {
    await assert.rejects(read([status(408, 'Request Timeout')]), /408 Request Timeout/);
  });
});

describe("a page of one filter's messages (batch, next_by_subj)", () => {
  const page = (messages: readonly Msg[]) => {
    const { nc, jsm } = answering(messages);
    return directBatch(nc, jsm, 'S', { next_by_subj: 's.>', batch: 2, seq: 1 }, /not found/i);
  };

  it('answers the messages in order and how many match past them', async () => {
    const answer = await page([stored('s.a', 3), stored('s.b', 5), status(204, 'EOB', 7)]);
    assert.deepEqual(
      answer.messages.map(({ seq }) => seq),
      [3, 5],
    );
    assert.equal(answer.pending, 7);
  });

  it('answers nothing when nothing matches from there on', async () => {
    assert.deepEqual(await page([status(404, 'Message Not Found')]), { messages: [], pending: 0 });
  });
});

describe('one direct get on the shared inbox', () => {
  const get = (answer: Msg) =>
    directGet(
      answeringWith([answer]),
      { getOptions: () => ({ apiPrefix: '$JS.API', timeout: 5_000 }) },
      'S',
      { last_by_subj: 's.a' },
    );

  it('answers the message by the server-set subject and sequence', async () => {
    const found = await get(stored('s.a', 9));
    assert.deepEqual([found?.subject, found?.seq], ['s.a', 9]);
  });

  it('answers nothing for a 404', async () => {
    assert.equal(await get(status(404, 'Message Not Found')), undefined);
  });

  it('fails with NATS unavailable when no stream answers, otherwise with the status', async () => {
    const noStream = await get(status(503, 'No Responders')).catch((error: unknown) => error);
    assert.equal(classifyFailure(noStream), 'transient', String(noStream));
    await assert.rejects(get(status(408, 'Request Timeout')), /408 Request Timeout/);
  });
});
