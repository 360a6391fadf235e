// A dead-lettered object is parked at its generation: only a spec change, a
// re-drive or a new version's upgrade sweep tries it again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../events/kube-object.js';
import { CRASHED_PROCESS, DEAD_LETTERED, isParked, leaveParked } from './degraded.js';
import { encodeWorkMark, type WorkReason } from './work-mark.js';

const key = { group: 'example.test', resource: 'sites', namespace: 'shop', name: 'a' };

const parkedAt = (generation: number, observed: number, message = 'boom'): KubeObject => ({
  apiVersion: 'example.test/v1',
  kind: 'Site',
  metadata: { name: 'a', namespace: 'shop', uid: 'u', resourceVersion: '1', generation },
  status: {
    conditions: [
      {
        type: 'Degraded',
        status: 'True',
        reason: DEAD_LETTERED,
        message,
        observedGeneration: observed,
        lastTransitionTime: '2026-12-06T00:00:00Z',
      },
    ],
  },
});

const marked = (reason: WorkReason) => ({
  key,
  body: encodeWorkMark({ key, reason, time: '2026-12-06T00:00:00Z' }),
});

describe('a parked object', () => {
  it('is left alone on its own changes, tried again on a re-drive or a new version', () => {
    const parked = parkedAt(2, 2);
    assert.equal(isParked(parked), true);
    for (const reason of ['watch', 'owned', 'resync', 'requeue', 'relist'] as const)
      assert.equal(leaveParked(marked(reason), parked), true, reason);
    // the fix may be in the code: an upgrade's sweep gives it a new round of attempts
    assert.equal(leaveParked(marked('upgrade'), parked), false);
    assert.equal(leaveParked(marked('redrive'), parked), false);
    assert.equal(leaveParked({ key }, parked), true, 'a request without a mark');
  });

  it('is not tried again by a sweep when it killed its process, only by a re-drive', () => {
    const crashed = parkedAt(2, 2, `${CRASHED_PROCESS} 5 times (out of memory, …)`);
    assert.equal(leaveParked(marked('upgrade'), crashed), true);
    assert.equal(leaveParked(marked('redrive'), crashed), false);
  });

  it('is not parked any more once its spec changed', () => {
    assert.equal(isParked(parkedAt(3, 2)), false);
    assert.equal(leaveParked(marked('watch'), parkedAt(3, 2)), false);
  });
});
