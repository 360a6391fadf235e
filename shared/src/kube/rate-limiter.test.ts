import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBucket } from './rate-limiter.js';

describe('token bucket', () => {
  it('lets a burst through at once, then paces requests at qps', async () => {
    let now = 0;
    const bucket = new TokenBucket(100, 5, () => now);
    for (let i = 0; i < 5; i++) await bucket.take(); // the burst, with no time passing
    let served = false;
    const sixth = bucket.take().then(() => (served = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(served, false, 'the sixth request waits for a token');
    now += 10; // 10 ms at 100 qps refills one token
    await sixth;
    assert.equal(served, true);
  });
});
