import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RepeatedEvents } from './repeated-events.js';

test('an Event recorded again as it was is sent once within the window', () => {
  let now = 0;
  const events = new RepeatedEvents(600_000, () => now);
  assert.equal(events.fresh('u1', 'Normal', 'Reconciled', 'round 1'), true);
  now = 1_000;
  assert.equal(events.fresh('u1', 'Normal', 'Reconciled', 'round 1'), false);
  // another note, reason, type or object is another Event
  assert.equal(events.fresh('u1', 'Normal', 'Reconciled', 'round 2'), true);
  assert.equal(events.fresh('u1', 'Normal', 'Synced', 'round 1'), true);
  assert.equal(events.fresh('u1', 'Warning', 'Reconciled', 'round 1'), true);
  assert.equal(events.fresh('u2', 'Normal', 'Reconciled', 'round 1'), true);
  // after the window, sent again
  now = 601_001;
  assert.equal(events.fresh('u1', 'Normal', 'Reconciled', 'round 1'), true);
});
