// How the hand-down's batched read pages through the outcome records and
// hands the rest to a consumer when a page fails, fed through a stand-in for
// the shared inbox (the whole path on a real server:
// test/integration/handed-down-writes.test.ts).
import { headers, type Msg } from '@nats-io/nats-core';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../obs/logger.js';
import { answeringEach } from './inbox-requests.test-support.js';
import { pagedRecords, type ReadFrom } from './outcome-records-since.js';

const silent = createLogger({ service: 'outcome-records-since-test', level: 'silent' });

function record(seq: number): Msg {
  const h = headers();
  h.set('Nats-Subject', `kubebus.outcomes.r.${String(seq)}`);
  h.set('Nats-Sequence', String(seq));
  h.set('Nats-Time-Stamp', new Date(seq * 1_000).toISOString());
  return { headers: h, data: new Uint8Array() } as Msg;
}

function status(code: number, description: string, pending?: number): Msg {
  const h = headers(code, description);
  if (pending !== undefined) h.set('Nats-Num-Pending', String(pending));
  return { headers: h, data: new Uint8Array() } as Msg;
}

/** A shared inbox answering each request with the next of `pages`; the requests it was sent. */
function inbox(pages: readonly (readonly Msg[])[]) {
  const requests: Record<string, unknown>[] = [];
  const via = answeringEach((payload) => {
    requests.push(JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>);
    return pages[requests.length - 1] ?? [];
  });
  return { via, requests };
}

const jsm = { getOptions: () => ({ apiPrefix: '$JS.API', timeout: 50 }) };

function reading(pages: readonly (readonly Msg[])[], now = () => 0) {
  const { via, requests } = inbox(pages);
  const fallbacks: ReadFrom[] = [];
  const records = pagedRecords(
    via,
    jsm,
    'kubebus.outcomes.r.>',
    (from, _tooMany, take) => {
      fallbacks.push(from);
      take('kubebus.outcomes.r.from-consumer', new Uint8Array(), 0);
      return Promise.resolve('read');
    },
    silent,
    now,
  );
  const taken: string[] = [];
  const read = (tooMany: (count: number) => boolean = () => false) =>
    records.read(
      0,
      tooMany,
      (subject) => {
        taken.push(subject.slice('kubebus.outcomes.r.'.length));
      },
      10_000,
    );
  return { read, requests, fallbacks, taken };
}

describe('the outcome records read in pages', () => {
  it('reads page after page from the last record taken, until none is pending', async () => {
    const { read, requests, taken, fallbacks } = reading([
      [record(3), record(5), status(204, 'EOB', 2)],
      [record(8), record(9), status(204, 'EOB', 0)],
    ]);
    assert.equal(await read(), 'read');
    assert.deepEqual(taken, ['3', '5', '8', '9']);
    assert.equal(requests[1]?.seq, 6);
    assert.deepEqual(fallbacks, []);
  });

  it('counts the whole window from the first page, and reads nothing when it is too many', async () => {
    const { read, taken } = reading([[record(3), record(5), status(204, 'EOB', 300)]]);
    let counted = 0;
    const result = await read((count) => {
      counted = count;
      return count > 100;
    });
    assert.equal(result, 'too-many');
    assert.equal(counted, 302);
    assert.deepEqual(taken, []);
  });

  it('an empty window is read at once', async () => {
    const { read, taken, fallbacks } = reading([[status(404, 'Message Not Found')]]);
    assert.equal(await read(), 'read');
    assert.deepEqual(taken, []);
    assert.deepEqual(fallbacks, []);
  });

  it('a later page that finds nothing where records were pending fails, and the consumer goes on after the last taken', async () => {
    const { read, taken, fallbacks } = reading([
      [record(3), record(5), status(204, 'EOB', 2)],
      [status(404, 'Message Not Found')],
    ]);
    assert.equal(await read(), 'read');
    assert.deepEqual(fallbacks, [{ seq: 6 }]);
    assert.deepEqual(taken, ['3', '5', 'from-consumer']);
  });

  it('a page that does not end in time fails; a first page that fails is read from the moment', async () => {
    const { read, fallbacks } = reading([[record(3)]]);
    assert.equal(await read(), 'read');
    assert.deepEqual(fallbacks, [{ ms: 0 }]);
  });

  it('stops at the deadline between pages, and does not start a consumer past it', async () => {
    let clock = 0;
    const pages = [
      [record(3), status(204, 'EOB', 5)],
      [record(4), status(204, 'EOB', 4)],
    ];
    const late = reading(pages, () => (clock += 6_000));
    assert.equal(await late.read(), 'late');
    assert.deepEqual(late.taken, ['3']);
    clock = 0;
    const failing = reading([[record(3)]], () => (clock += 6_000));
    assert.equal(await failing.read(), 'late');
    assert.deepEqual(failing.fallbacks, []);
  });
});
