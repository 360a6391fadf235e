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

describe('kubebus status of a dead letter', () => {
  const letter = {
    seq: 7,
    time: '2026-12-05T20:01:00.000Z',
    origin: 'apps',
    attempts: 3,
    reason: 'quota refused',
  };
  const outcome = (result: string, at: string, controller = 'apps') => ({
    controller,
    result,
    ms: 5,
    attempt: 1,
    reconcileId: 'r',
    traceparent: '00-a-b-01',
    at,
  });
  const now = Date.parse('2026-12-05T20:10:00Z');

  it('says to re-drive it after the fix while nothing reconciled the object since', () => {
    const shown = formatStatus(
      {
        ...base,
        letters: [letter],
        outcomes: [
          outcome('error', '2026-12-05T20:00:59.000Z'),
          outcome('success', '2026-12-05T20:00:00.000Z'),
          // another controller's success is not this letter's
          outcome('success', '2026-12-05T20:05:00.000Z', 'other'),
        ],
      },
      now,
    );
    assert.match(shown, /#7 .* \(after the fix: kubebus dlq redrive 7\)/);
  });

  it('says there is nothing to re-drive once its controller reconciled the object', () => {
    const shown = formatStatus(
      { ...base, letters: [letter], outcomes: [outcome('success', '2026-12-05T20:05:00.000Z')] },
      now,
    );
    assert.match(shown, /#7 .* \(reconciled since \(5m\d*s? ago\): nothing to re-drive\)/);
    assert.doesNotMatch(shown, /dlq redrive/);
  });
});
