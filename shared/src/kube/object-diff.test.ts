import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diff, formatChange } from './object-diff.js';

describe('history diff', () => {
  it('lists changed paths and ignores resourceVersion noise', () => {
    const before = {
      metadata: { resourceVersion: '1', labels: { a: '1' } },
      spec: { replicas: 3, engine: 'postgres' },
    };
    const after = {
      metadata: { resourceVersion: '2', labels: { a: '1', b: '2' } },
      spec: { replicas: 5, engine: 'postgres' },
    };
    assert.deepEqual(diff(before, after).map(formatChange), [
      'metadata.labels.b: (none) → "2"',
      'spec.replicas: 3 → 5',
    ]);
  });

  it('does not care about the order of keys', () => {
    assert.deepEqual(diff({ c: [{ a: 1, b: 2 }] }, { c: [{ b: 2, a: 1 }] }), []);
  });
});
