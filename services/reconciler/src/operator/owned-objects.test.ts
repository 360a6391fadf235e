import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keptAfterDelete } from './owned-objects.js';

const at = '2026-12-06T03:00:00Z';

describe('whether the apiserver kept what a DELETE answered', () => {
  it('kept: marked, and held by a finalizer', () => {
    assert.equal(
      keptAfterDelete({ metadata: { uid: 'u', deletionTimestamp: at, finalizers: ['x/y'] } }),
      true,
    );
  });

  it('kept: a pod in its grace period', () => {
    assert.equal(
      keptAfterDelete({
        metadata: { uid: 'u', deletionTimestamp: at, deletionGracePeriodSeconds: 30 },
      }),
      true,
    );
  });

  it('gone: a pod deleted at once is answered marked, with a grace of 0 and no finalizer', () => {
    assert.equal(
      keptAfterDelete({
        metadata: {
          uid: 'u',
          deletionTimestamp: at,
          deletionGracePeriodSeconds: 0,
          finalizers: [],
        },
      }),
      false,
    );
  });

  it('gone: an object answered unmarked, a Status, or nothing', () => {
    assert.equal(keptAfterDelete({ metadata: { uid: 'u' } }), false);
    assert.equal(keptAfterDelete({ details: { uid: 'u' } }), false);
    assert.equal(keptAfterDelete(undefined), false);
  });
});
