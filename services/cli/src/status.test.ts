// `kubebus status` of an object that is gone: the bus still has its last
// state, which must not read as a live object's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatStatus, type ObjectStatus } from './status.js';

const base: ObjectStatus = {
  key: { group: 'apps.example.com', resource: 'apps', namespace: 'shop', name: 'web' },
  found: 'bus',
  generation: 2,
  observedGeneration: 2,
  deleting: false,
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Reconciled',
      message: '',
      lastTransitionTime: '2026-12-05T20:00:00Z',
    },
  ],
  events: [],
  work: [],
  outcomes: [],
  letters: [],
} as unknown as ObjectStatus;

describe('kubebus status of a deleted object', () => {
  it('says it was deleted, and when, above its last state', () => {
    const now = Date.parse('2026-12-05T20:10:00Z');
    const shown = formatStatus({ ...base, deletedAt: '2026-12-05T20:05:00Z' }, now);
    const lines = shown.split('\n');
    assert.match(lines[1] ?? '', /^deleted 5m\d*s? ago: what follows is its last state before$/);
    assert.doesNotMatch(formatStatus(base, now), /deleted/);
  });
});
