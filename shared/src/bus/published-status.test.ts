import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PublishedStatus } from './published-status.js';

const ready = (status: string, time: string) => [
  { type: 'Ready', status, reason: 'R', message: '', lastTransitionTime: time },
];
const intent = (status: Record<string, unknown>, observedGeneration = 1, uid = 'u1') => ({
  uid,
  observedGeneration,
  status,
});

describe('published status intents', () => {
  it('leave out an intent the object already shows, transition times aside', () => {
    const memo = new PublishedStatus();
    const current = { phase: 'Ready', conditions: ready('True', 't1'), observedGeneration: 1 };
    assert.equal(
      memo.redundant(intent({ phase: 'Ready', conditions: ready('True', 't2') }), current),
      true,
    );
    assert.equal(memo.redundant(intent({ phase: 'Failed' }), current), false);
    assert.equal(
      memo.redundant(intent({ phase: 'Ready' }, 2), current),
      false,
      'a newer generation',
    );
  });

  it('leave out the same intent again while the status is as it was when it went out', () => {
    const memo = new PublishedStatus();
    const first = intent({ phase: 'Provisioning', conditions: ready('False', 't1') });
    assert.equal(memo.redundant(first, {}), false);
    memo.published(first, {});
    const again = intent({ phase: 'Provisioning', conditions: ready('False', 't2') });
    assert.equal(memo.redundant(again, {}), true, 'still pending');
    assert.equal(memo.redundant(intent({ phase: 'Ready' }), {}), false, 'a different status');
    assert.equal(memo.redundant(again, {}), true);
    assert.equal(
      memo.redundant(again, { phase: 'Failed', observedGeneration: 1 }),
      false,
      'someone else wrote the status: it is repaired',
    );
    assert.equal(
      memo.redundant(intent({ phase: 'Provisioning' }, 2), {}),
      false,
      'a later generation',
    );
    assert.equal(
      memo.redundant(intent({ phase: 'Provisioning' }, 1, 'u2'), {}),
      false,
      're-created',
    );
  });

  it('publish again once the memo is older than its ttl, or forgotten', () => {
    let now = 0;
    const memo = new PublishedStatus({ ttlMs: 1_000, now: () => now });
    const sent = intent({ phase: 'Provisioning' });
    memo.published(sent, {});
    assert.equal(memo.redundant(sent, {}), true);
    now = 1_000;
    assert.equal(memo.redundant(sent, {}), false, 'a lost or parked intent goes out again');
    memo.published(sent, {});
    memo.forget('u1');
    assert.equal(memo.redundant(sent, {}), false);
  });

  it('publish a newer word even when the object shows it: the latest pending intent wins', () => {
    const memo = new PublishedStatus();
    const shown = { phase: 'Ready', observedGeneration: 1 };
    memo.published(intent({ phase: 'Failed' }), shown); // on its way, not yet applied
    assert.equal(memo.redundant(intent({ phase: 'Ready' }), shown), false);
  });

  it('keep at most capacity objects', () => {
    const memo = new PublishedStatus({ capacity: 1 });
    memo.published(intent({ phase: 'A' }, 1, 'u1'), {});
    memo.published(intent({ phase: 'A' }, 1, 'u2'), {});
    assert.equal(memo.redundant(intent({ phase: 'A' }, 1, 'u1'), {}), false);
    assert.equal(memo.redundant(intent({ phase: 'A' }, 1, 'u2'), {}), true);
  });

  it('publish a status in place again while a different one sent earlier may still be pending', () => {
    let now = 0;
    const memo = new PublishedStatus({ ttlMs: 10_000, now: () => now });
    const current = { phase: 'Ready', observedGeneration: 1 };
    memo.published(intent({ phase: 'Provisioning' }), current);
    // the writer is backlogged past the memo's life: Provisioning may yet be applied
    now = 60_000;
    assert.equal(memo.redundant(intent({ phase: 'Ready' }), current), false);
  });

  it("show a reconcile its own pending status over the one it went out over, and nothing else's", () => {
    let now = 0;
    const memo = new PublishedStatus({ ttlMs: 10_000, now: () => now });
    const before = { phase: 'Pending', observedGeneration: 1 };
    memo.published(intent({ announced: 2, phase: 'Ready' }, 2), before);
    const read = (status: Record<string, unknown>, generation = 2, uid = 'u1') =>
      memo.own({ uid, generation, status });
    // the bus still shows the status the intent went out over: the intent's, as the writer makes it
    assert.deepEqual(read(before), { announced: 2, phase: 'Ready', observedGeneration: 2 });
    assert.equal(read(before, 1), 'older', 'a record from before the generation it reconciled');
    assert.equal(
      read({ announced: 2, phase: 'Ready', observedGeneration: 2 }),
      undefined,
      'written',
    );
    assert.equal(
      read({ phase: 'Failed', observedGeneration: 1 }),
      undefined,
      "someone else's word",
    );
    assert.deepEqual(
      read(before, 3),
      { announced: 2, phase: 'Ready', observedGeneration: 2 },
      'a newer spec: the latest word on the status is still the intent',
    );
    assert.equal(read(before, 2, 'u2'), undefined, 'another incarnation');
    now = 10_000;
    assert.equal(read(before), undefined, 'not trusted past its life: it may have been refused');
  });

  it('know a run of their own intents: one applied while a later one is pending is still theirs', () => {
    const memo = new PublishedStatus();
    const before = { count: 0, observedGeneration: 1 };
    const counted = (count: number) => intent({ count });
    memo.published(counted(1), before);
    // the next reconcile saw count 1 (its own intent) while the bus still showed `before`
    memo.published(counted(2), before);
    // the writer had taken count 1 already and applied it; count 2 is still on its way
    const applied = { count: 1, observedGeneration: 1 };
    assert.deepEqual(memo.own({ uid: 'u1', generation: 1, status: applied }), {
      count: 2,
      observedGeneration: 1,
    });
    assert.equal(memo.redundant(counted(2), applied), true, 'count 2 is pending');
    // someone else's count is not the run's
    assert.equal(memo.own({ uid: 'u1', generation: 1, status: { count: 7 } }), undefined);
    // a third intent over the applied first keeps the run: both earlier ones are the run's
    memo.published(counted(3), applied);
    assert.deepEqual(memo.own({ uid: 'u1', generation: 1, status: before }), {
      count: 3,
      observedGeneration: 1,
    });
    assert.deepEqual(
      memo.own({ uid: 'u1', generation: 1, status: { count: 2, observedGeneration: 1 } }),
      { count: 3, observedGeneration: 1 },
    );
  });

  it("show a reconcile the intent its partition's previous owner left pending, over the status first read", () => {
    let now = 0;
    const memo = new PublishedStatus({ ttlMs: 10_000, now: () => now });
    memo.inherit(intent({ announced: 2 }, 2));
    const read = (status: Record<string, unknown>, generation = 2) =>
      memo.own({ uid: 'u1', generation, status });
    const before = { announced: 1, observedGeneration: 1 };
    assert.deepEqual(read(before), { announced: 2, observedGeneration: 2 });
    assert.equal(read(before, 1), 'older');
    // the first status read is the one it went out over: another one later is someone else's
    assert.equal(read({ announced: 7, observedGeneration: 2 }), undefined);
    // not redundant once the status shows someone else's word: published again, and so repaired
    assert.equal(memo.redundant(intent({ announced: 2 }, 2), { announced: 7 }), false);
    now = 10_000;
    assert.equal(read(before), undefined, "trusted for the memo's life from when it was taken");
  });

  it('take the pending intent for the latest word, over an older one of their own', () => {
    const memo = new PublishedStatus();
    const before = { phase: 'Pending' };
    memo.published(intent({ phase: 'Old' }, 2), before);
    // another process published since (the partition went and came back): its intent is pending
    memo.inherit(intent({ phase: 'Ready' }, 3));
    assert.deepEqual(memo.own({ uid: 'u1', generation: 3, status: before }), {
      phase: 'Ready',
      observedGeneration: 3,
    });
    // its own again, still pending: the run it belongs to is kept
    memo.published(intent({ phase: 'Ready' }, 3), before);
    memo.inherit(intent({ phase: 'Ready' }, 3));
    assert.equal(memo.redundant(intent({ phase: 'Ready' }, 3), before), true);
  });
});
