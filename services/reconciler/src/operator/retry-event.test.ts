import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryAnnounced, retryMessage, retryNote } from './retry-event.js';

test('a repeated failure is said at its 2nd, 4th, 8th… attempt only', () => {
  const said = Array.from({ length: 40 }, (_, i) => i + 1).filter(retryAnnounced);
  assert.deepEqual(said, [2, 4, 8, 16, 32]);
});

test('the note names the attempt and the first line of the error', () => {
  assert.equal(
    retryNote(4, new Error('database not reachable\n    at connect (db.ts:1)')),
    'attempt 4 failed, retried with backoff: database not reachable',
  );
  assert.equal(retryNote(2, 'plain'), 'attempt 2 failed, retried with backoff: plain');
});

test('the Ready message is the first line of the error, without the attempt', () => {
  assert.equal(
    retryMessage(new Error('database not reachable\n    at connect (db.ts:1)')),
    'database not reachable',
  );
  assert.equal(retryMessage('plain'), 'plain');
  // never an empty condition message
  assert.equal(retryMessage(new Error('\n  details below')), '  details below');
  assert.equal(retryMessage(new TypeError('')), 'TypeError');
});
