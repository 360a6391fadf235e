import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, resultLabel, type RetryPolicy } from './outcome.js';
import { TerminalError } from './reconciler.js';

const policy: RetryPolicy = { baseMs: 100, capMs: 10_000, maxAttempts: 5 };
const always = () => 1;

describe('outcome → action', () => {
  it('acks a success and requeues after the asked delay', () => {
    assert.deepEqual(decide({ ok: true, result: undefined }, 1, policy), { kind: 'ack' });
    assert.deepEqual(decide({ ok: true, result: { requeueAfterMs: 5_000 } }, 1, policy), {
      kind: 'retry',
      delayMs: 5_000,
    });
  });

  it('retries errors with exponential backoff up to the cap', () => {
    const error = new Error('boom');
    const delays = [1, 2, 3, 4].map((attempt) => {
      const action = decide({ ok: false, error }, attempt, policy, always);
      if (action.kind !== 'retry') throw new Error(`expected a retry, got ${action.kind}`);
      return action.delayMs;
    });
    assert.deepEqual(delays, [100, 200, 400, 800]);
    const capped = decide(
      { ok: false, error },
      4,
      { ...policy, capMs: 300, maxAttempts: 9 },
      always,
    );
    assert.deepEqual(capped, { kind: 'retry', delayMs: 300, error });
  });

  it('dead-letters once the retry budget is spent', () => {
    const error = new Error('still broken');
    assert.deepEqual(decide({ ok: false, error }, 5, policy), { kind: 'dead-letter', error });
  });

  it('never retries a TerminalError', () => {
    const error = new TerminalError('bad spec');
    const action = decide({ ok: false, error }, 1, policy);
    assert.deepEqual(action, { kind: 'terminal', error });
    assert.equal(resultLabel(action), 'terminal_error');
  });
});
