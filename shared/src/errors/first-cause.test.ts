import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageWithCause } from './first-cause.js';

test("an error's first line says its first cause, once", () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), {
    code: 'ECONNREFUSED',
  });
  assert.equal(
    messageWithCause(new TypeError('fetch failed', { cause: refused })),
    'fetch failed: connect ECONNREFUSED 127.0.0.1:8080',
  );
  // after the first line, the rest kept
  assert.equal(
    messageWithCause(new Error('sync failed\n    at x (a.ts:1)', { cause: refused })),
    'sync failed: connect ECONNREFUSED 127.0.0.1:8080\n    at x (a.ts:1)',
  );
  // already said, no cause, a cause without a message: its code
  assert.equal(
    messageWithCause(new Error('failed: connect ECONNREFUSED 127.0.0.1:8080', { cause: refused })),
    'failed: connect ECONNREFUSED 127.0.0.1:8080',
  );
  assert.equal(messageWithCause(new Error('plain')), 'plain');
  assert.equal(messageWithCause('text'), 'text');
  const aggregate = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
  assert.equal(
    messageWithCause(new Error('fetch failed', { cause: aggregate })),
    'fetch failed: ECONNREFUSED',
  );
});
