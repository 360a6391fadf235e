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

  it('bounds the waiting in all', async () => {
    const slots = new ReviewSlots({ ...limits, waitMs: 50 });
    for (const peer of ['a', 'a', 'b', 'b']) await slots.take(peer);
    const waiting = ['a', 'a', 'b', 'b', 'c'].map((peer) => slots.take(peer));
    assert.equal(await slots.take('d'), 'total');
    assert.deepEqual(await Promise.all(waiting), ['peer', 'peer', 'peer', 'peer', 'total']);
  });
});
