import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Progress } from './progress.js';

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('watch progress', () => {
  it('commits only a complete prefix of changes', async () => {
    const progress = new Progress('1');
    const a = deferred();
    const b = deferred();
    progress.track('2', a.promise);
    progress.track('3', b.promise);
    progress.mark('4');
    b.resolve();
    await tick();
    assert.equal(progress.committed, '1', 'change 2 is still in flight');
    a.resolve();
    await tick();
    assert.equal(progress.committed, '4');
    assert.equal(progress.pending, 0);
  });

  it('counts a failed publish as settled (it went to the DLQ)', async () => {
    const progress = new Progress();
    progress.track('9', Promise.reject(new Error('rejected')));
    await tick();
    assert.equal(progress.committed, '9');
  });
});
