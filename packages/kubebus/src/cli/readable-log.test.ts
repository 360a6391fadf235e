// kubebus dev's log: a retried reconcile is one line with the attempt, the
// budget, the delay and the error's message — no JSON, no stack.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { readableLine } from './readable-log.js';

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
  it('names the object the logger carries when a call logs a field called namespace', async () => {
    // a real child logger, as the runtime binds the object, and a ctx.log call of the operator's
    const lines: string[] = [];
    const log = pino(
      { base: {}, timestamp: () => ',"time":"2026-12-01T22:50:01.250Z"' },
      { write: (chunk: string) => lines.push(chunk.trim()) },
    );
    log
      .child({ role: 'reconciler', namespace: '', name: 'gone' })
      .info({ namespace: 'tenant-gone' }, 'finalize: deleting its namespace');
    await new Promise((resolve) => setImmediate(resolve));
    const line = readableLine(lines[0] ?? '', false);
    assert.match(line, / gone finalize: deleting its namespace namespace="?tenant-gone"?$/);
  });

  it('shows a retried reconcile as one line: attempt/budget, delay, message', () => {
    const line = readableLine(
      logged({ attempt: 3, maxAttempts: 10, retryInMs: 2_000 }, 'reconcile failed; will retry'),
      false,
    );
    assert.equal(
      line,
      '22:50:01.250 ERROR reconciler    shop/db retry 3/10 in 2.0s: connect ECONNREFUSED 10.0.0.7:5432 while opening the pool',
    );
    assert.doesNotMatch(line, /[{}\n]|stack|at /);
  });

  it('keeps "will retry without limit" for retries without a budget (a dependency is down)', () => {
    const line = readableLine(
      logged({ retryInMs: 500 }, 'a dependency is unavailable; will retry without limit'),
      false,
    );
    assert.match(
      line,
      / shop\/db a dependency is unavailable; will retry without limit; next in 500ms: connect ECONNREFUSED 10\.0\.0\.7:5432/,
    );
  });

  it("shows an AggregateError's reasons when it has no message (ECONNREFUSED from localhost)", () => {
    // what Node throws when every address of `localhost` refuses: no message, one error each
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}:4222`), { code: 'ECONNREFUSED' });
    const error = Object.assign(new AggregateError([refused('::1'), refused('127.0.0.1')]), {
      code: 'ECONNREFUSED',
    });
    const line = readableLine(
      logged(
        { err: pino.stdSerializers.err(error), attempt: 3, maxAttempts: 10, retryInMs: 2_000 },
        'x',
      ),
      false,
    );
    assert.match(
      line,
      / retry 3\/10 in 2\.0s: connect ECONNREFUSED ::1:4222; connect ECONNREFUSED 127\.0\.0\.1:4222$/,
    );
  });

  it("falls back to the error's code, then says there was no reason", () => {
    const coded = { type: 'Error', message: '', code: 'ETIMEDOUT' };
    assert.match(
      readableLine(
        logged({ err: coded, retryInMs: 1_500, maxAttempts: 5, attempt: 1 }, 'x'),
        false,
      ),
      / retry 1\/5 in 1\.5s: ETIMEDOUT$/,
    );
    assert.match(
      readableLine(
        logged({ err: { type: 'Error', message: '' }, retryInMs: 100, maxAttempts: 5 }, 'x'),
        false,
      ),
      / retry in 100ms: no reason given$/,
    );
    // and outside a retry, an error with only a code still says something
    assert.match(readableLine(logged({ err: coded }, 'lost the watch'), false), / error=ETIMEDOUT/);
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
