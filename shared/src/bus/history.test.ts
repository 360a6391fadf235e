// A pass of the last record per subject keeps the last of each: an ordered
// consumer that restarts after a missed heartbeat goes on from a sequence,
// and one started per subject delivers what came since too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastOfEach, type StoredMessage } from './history.js';

const record = (subject: string, seq: number): StoredMessage => ({
  subject,
  seq,
  data: new Uint8Array(),
  header: undefined,
});

describe('the last record of each subject', () => {
  it('keeps the latest of each, in stream order, whatever the pass delivered twice', () => {
    const kept = lastOfEach([
      record('a', 3),
      record('b', 5),
      // after a restart from sequence 4, or a change during the pass: b again, a later
      record('b', 5),
      record('a', 9),
      record('c', 7),
    ]);
    assert.deepEqual(
      kept.map(({ subject, seq }) => `${subject}@${String(seq)}`),
      ['b@5', 'c@7', 'a@9'],
    );
  });
});
