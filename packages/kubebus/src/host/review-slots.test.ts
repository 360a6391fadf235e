import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReviewSlots, type ReviewSlotLimits } from './review-slots.js';

const limits: ReviewSlotLimits = {
  perPeer: 2,
  total: 4,
  waitingPerPeer: 3,
  waitingTotal: 5,
  waitMs: 60_000,
};

/** Whether a promise has settled, after the microtasks queued so far. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('turns at ConversionReviews', () => {
  it('gives a turn at once while the caps allow, and one that waited as soon as a turn of its peer ends', async () => {
    const slots = new ReviewSlots(limits);
    assert.equal(await slots.take('apiserver'), true);
    assert.equal(await slots.take('apiserver'), true);
    const third = slots.take('apiserver');
    assert.equal(await settled(third), false);
    slots.release('apiserver');
    assert.equal(await third, true);
    assert.equal(slots.inFlight, 2);
  });

  it("serves another peer at once while one peer's turns are all held", async () => {
    const slots = new ReviewSlots(limits);
    await slots.take('pod');
    await slots.take('pod');
    const waiting = slots.take('pod');
    assert.equal(await slots.take('apiserver'), true);
    assert.equal(await settled(waiting), false);
    slots.release('pod');
    assert.equal(await waiting, true);
  });

  it('refuses at once past a peer’s waiting, and after the wait for a turn that never came', async () => {
    const slots = new ReviewSlots({ ...limits, waitMs: 50 });
    await slots.take('pod');
    await slots.take('pod');
    const waiting = [slots.take('pod'), slots.take('pod'), slots.take('pod')];
    assert.equal(await slots.take('pod'), 'peer');
    assert.deepEqual(await Promise.all(waiting), ['peer', 'peer', 'peer']);
    assert.equal(slots.inFlight, 2);
  });

  it('hands a freed turn to the waiting peer with the fewest in flight, not the earliest waiter', async () => {
    const slots = new ReviewSlots(limits);
    // two senders hold every turn, and one of them waits for more
    for (const peer of ['a', 'a', 'b', 'b']) await slots.take(peer);
    const moreOfA = slots.take('a');
    const apiserver = slots.take('apiserver');
    slots.release('a');
    assert.equal(await apiserver, true);
    assert.equal(await settled(moreOfA), false);
    slots.release('b');
    assert.equal(await moreOfA, true);
  });

  it('with every place in the queue taken, has the peer waiting most give way to a newcomer', async () => {
    const slots = new ReviewSlots({ ...limits, waitMs: 50 });
    for (const peer of ['a', 'a', 'b', 'b']) await slots.take(peer);
    // a and b fill the queue, a with the most
    const ofA = ['a', 'a', 'a'].map((peer) => slots.take(peer));
    const ofB = ['b', 'b'].map((peer) => slots.take(peer));
    assert.equal(slots.waiting, 5);
    // the apiserver takes the newest of a's places, and the next turn
    const apiserver = slots.take('apiserver');
    assert.equal(await ofA[2], 'peer');
    assert.equal(slots.waiting, 5);
    slots.release('b');
    assert.equal(await apiserver, true);
    await Promise.all([...ofA, ...ofB]);
  });

  it('takes a waiter whose connection is gone out of the queue at once', async () => {
    const slots = new ReviewSlots(limits);
    await slots.take('pod');
    await slots.take('pod');
    const gone = new AbortController();
    const waiting = slots.take('pod', gone.signal);
    assert.equal(slots.waiting, 1);
    gone.abort();
    assert.equal(await waiting, 'peer');
    assert.equal(slots.waiting, 0);
    // its turn, when one ends, goes to nobody: the count is as before
    slots.release('pod');
    assert.equal(slots.inFlight, 1);
  });

  it('bounds the waiting in all', async () => {
    const slots = new ReviewSlots({ ...limits, waitingPerPeer: 4, waitMs: 50 });
    for (const peer of ['a', 'a', 'b', 'b']) await slots.take(peer);
    const waiting = ['a', 'a', 'a', 'b', 'b'].map((peer) => slots.take(peer));
    // the queue is full and the newcomer's own peer waits most: it displaces nobody
    assert.equal(await slots.take('a'), 'peer');
    assert.equal(slots.waiting, 5);
    await Promise.all(waiting);
  });
});
