// kubebus dev's log: a retried reconcile is one line with the attempt, the
// budget, the delay and the error's message — no JSON, no stack.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { duration, readableLine } from './readable-log.js';

/** A line as pino writes it, for an error thrown by the operator's reconcile. */
function logged(fields: Record<string, unknown>, msg: string): string {
  const error = new Error('connect ECONNREFUSED 10.0.0.7:5432\n  while opening the pool');
  return JSON.stringify({
    level: 'error',
    time: '2026-12-01T22:50:01.250Z',
    service: 'tenants',
    role: 'reconciler',
    controller: 'tenants',
    reconcileID: 'r-1',
    namespace: 'shop',
    name: 'db',
    err: { type: 'Error', message: error.message, stack: error.stack },
    ...fields,
    msg,
  });
}

describe('readableLine', () => {
  it('shows a retried reconcile as one line: attempt/budget, delay, message', () => {
    const line = readableLine(
      logged({ attempt: 3, maxAttempts: 10, retryInMs: 2_000 }, 'reconcile failed; will retry'),
      false,
    );
    assert.equal(
      line,
      '22:50:01.250 ERROR reconciler    shop/db retry 3/10 in 2s: connect ECONNREFUSED 10.0.0.7:5432 while opening the pool',
    );
    assert.doesNotMatch(line, /[{}\n]|stack|at /);
  });

  it('says "retry in" for retries without a budget (a dependency is down)', () => {
    const line = readableLine(logged({ retryInMs: 500 }, 'a dependency is unavailable'), false);
    assert.match(line, / shop\/db retry in 500ms: connect ECONNREFUSED/);
  });

  it("shows any other error by its message, never its stack's frames", () => {
    const line = readableLine(logged({}, 'terminal-error hook failed'), false);
    assert.match(
      line,
      /terminal-error hook failed controller=tenants error="connect ECONNREFUSED .* pool"$/,
    );
    assert.doesNotMatch(line, /stack|\.ts:\d+|\n/);
  });

  it('keeps lines that are not JSON as they are', () => {
    assert.equal(readableLine('plain text', false), 'plain text');
  });
});

describe('duration', () => {
  it('reads as a person says it', () => {
    assert.deepEqual([250, 2_000, 1_500, 60_000, 150_000].map(duration), [
      '250ms',
      '2s',
      '1.5s',
      '1m',
      '2m30s',
    ]);
  });
});
