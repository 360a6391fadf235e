import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setCondition } from './conditions.js';

describe('status conditions', () => {
  const t0 = new Date('2026-01-01T00:00:00.000Z');
  const t1 = new Date('2026-01-01T01:00:00.000Z');

  it('keep lastTransitionTime while the status does not change', () => {
    const first = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'A', message: 'a' },
      t0,
    );
    const same = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'B', message: 'b' },
      t1,
    );
    const [ready] = same;
    assert.ok(ready);
    assert.equal(ready.lastTransitionTime, '2026-01-01T00:00:00Z');
    assert.equal(ready.reason, 'B');
    const flipped = setCondition(
      same,
      { type: 'Ready', status: 'True', reason: 'C', message: 'c' },
      t1,
    );
    assert.equal(flipped[0]?.lastTransitionTime, '2026-01-01T01:00:00Z');
  });

  it('keep other condition types, sorted by type', () => {
    let conditions = setCondition(
      undefined,
      { type: 'Ready', status: 'True', reason: 'R', message: '' },
      t0,
    );
    conditions = setCondition(
      conditions,
      { type: 'Degraded', status: 'False', reason: 'D', message: '' },
      t0,
    );
    assert.deepEqual(
      conditions.map((c) => c.type),
      ['Degraded', 'Ready'],
    );
  });
});
