import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kindsNeverReached } from './unreached.js';

test('a kind whose every schedule came back unreached tested nothing; one reached once did', () => {
  assert.deepEqual(
    kindsNeverReached([
      { schedule: 'intermediate:s0:k1', outcome: 'passed' },
      { schedule: 'intermediate:s0:k3', outcome: 'unreached' },
      { schedule: 'handover:s0:k2', outcome: 'unreached' },
      { schedule: 'lagging:s1', outcome: 'unreached' },
      { schedule: 'lagging:s1:primary', outcome: 'unreached' },
      { schedule: 'stale:s1:ConfigMap/a', outcome: 'not-applicable' },
      { schedule: 'status-restart:s0', outcome: 'passed' },
    ]),
    ['handover', 'lagging'],
  );
  assert.deepEqual(kindsNeverReached([]), []);
});
