import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReleasedFinalizers } from './released-finalizers.js';

test('a released uid is remembered, the least recent forgotten first past the bound', () => {
  const released = new ReleasedFinalizers(2);
  released.released('a');
  released.released('b');
  assert.ok(released.has('a') && released.has('b'));
  released.released('a'); // again: now the most recent
  released.released('c');
  assert.deepEqual(
    ['a', 'b', 'c'].map((uid) => released.has(uid)),
    [true, false, true],
  );
});
