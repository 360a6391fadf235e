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

  it('diffs conditions by type and containers by name, not as whole lists', () => {
    const condition = (type: string, status: string) => ({ type, status, reason: 'R' });
    assert.deepEqual(
      diff(
        { status: { conditions: [condition('Ready', 'False'), condition('Degraded', 'False')] } },
        { status: { conditions: [condition('Degraded', 'False'), condition('Ready', 'True')] } },
      ).map(formatChange),
      ['status.conditions[Ready].status: "False" → "True"'],
    );
    assert.deepEqual(
      diff(
        { containers: [{ name: 'db', image: 'postgres:15' }] },
        {
          containers: [
            { name: 'db', image: 'postgres:16' },
            { name: 'exporter', image: 'x' },
          ],
        },
      ).map(formatChange),
      [
        'containers[db].image: "postgres:15" → "postgres:16"',
        'containers[exporter]: (none) → {"name":"exporter","image":"x"}',
      ],
    );
  });

  it('diffs lists without a merge key whole', () => {
    assert.deepEqual(diff({ args: ['-a'] }, { args: ['-a', '-b'] }).map(formatChange), [
      'args: ["-a"] → ["-a","-b"]',
    ]);
  });
});
