import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  answeredUnavailable,
  retryAnnounced,
  retryMessage,
  retryNote,
  waitAnnounced,
  waitNote,
} from './retry-event.js';

/** An apiserver answer as the kube client throws it. */
function kubeApiError(status: number, message: string): Error {
  return Object.assign(new Error(message), { name: 'KubeApiError', status });
}

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
  // fetch's "fetch failed" says why only in its cause
  const refused = new Error('connect ECONNREFUSED 127.0.0.1:18713');
  assert.equal(
    retryMessage(new TypeError('fetch failed', { cause: refused })),
    'fetch failed: connect ECONNREFUSED 127.0.0.1:18713',
  );
});

test('a failure waited out is said at its 4th, 8th, 16th… in a row only', () => {
  // failuresInARow counts those before the try
  const said = Array.from({ length: 40 }, (_, i) => i).filter(waitAnnounced);
  assert.deepEqual(
    said.map((before) => before + 1),
    [4, 8, 16, 32],
  );
});

test("only the apiserver's answer to this request shows on the object, not a cluster-wide outage", () => {
  const webhook = kubeApiError(500, 'Internal error occurred: failed calling webhook "x"');
  assert.equal(answeredUnavailable(webhook), 500);
  // wrapped by the operator's own code, or by kubebus' apply
  assert.equal(answeredUnavailable(new Error('apply failed', { cause: webhook })), 500);
  assert.equal(
    answeredUnavailable(
      Object.assign(kubeApiError(404, 'namespaces "t" not found'), {
        details: { kind: 'namespaces' },
      }),
    ),
    404,
  );
  // another 404 (a resource not served): not about the namespace
  assert.equal(
    answeredUnavailable(kubeApiError(404, 'the server could not find the requested resource')),
    undefined,
  );
  // no answer, throttling, overload, timeouts, a stale token: the whole cluster's
  assert.equal(answeredUnavailable(kubeApiError(500, 'etcdserver: request timed out')), undefined);
  for (const status of [0, 401, 408, 429, 503, 504])
    assert.equal(answeredUnavailable(kubeApiError(status, 'x')), undefined, String(status));
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  assert.equal(answeredUnavailable(refused), undefined);
  assert.equal(
    answeredUnavailable(Object.assign(new Error('timeout'), { name: 'TimeoutError' })),
    undefined,
  );
  // another library's status is not the apiserver's
  assert.equal(answeredUnavailable(Object.assign(new Error('x'), { status: 503 })), undefined);
});

test('the note of a failure waited out names the count, the answer and the first line', () => {
  assert.equal(
    waitNote(4, 500, kubeApiError(500, 'Internal error occurred: failed calling webhook\nmore')),
    'failed 4 times in a row, the apiserver answering 500; retried without limit, never dead-lettered: Internal error occurred: failed calling webhook',
  );
});
