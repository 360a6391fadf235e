// The semaphore the in-process status writer bounds its writes with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Slots } from './slots.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('slots', () => {
  it('holds at most its size, and hands a freed slot to the first in line', async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    const first = await slots.acquire();
    const second = await slots.acquire();
    const waiting = ['c', 'd'].map((name) =>
      slots.acquire().then((release) => {
        order.push(name);
        return release;
      }),
    );
    await turn();
    assert.deepEqual(order, []);
    assert.equal(slots.held, 2);
    first();
    first(); // a second call frees nothing more
    const c = await waiting[0];
    assert.deepEqual(order, ['c']);
    assert.equal(slots.held, 2);
    second();
    const d = await waiting[1];
    c?.();
    d?.();
    assert.deepEqual(order, ['c', 'd']);
    assert.equal(slots.held, 0);
  });

  it('a waiter whose signal aborts leaves the line and never holds a slot', async () => {
    const slots = new Slots(1);
    const held = await slots.acquire();
    const abort = new AbortController();
    const gaveUp = slots.acquire(abort.signal);
    const next = slots.acquire();
    abort.abort(new Error('too late'));
    await assert.rejects(gaveUp, /too late/);
    held();
    const release = await next;
    assert.equal(slots.held, 1);
    release();
    assert.equal(slots.held, 0);
    await assert.rejects(slots.acquire(abort.signal), /too late/);
    assert.throws(() => new Slots(0), /positive integer/);
  });
});
