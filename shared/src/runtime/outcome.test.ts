import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from '../kube/api-error.js';
import { classifyFailure } from '../errors/failure-class.js';
import { decide, resultLabel, type RetryPolicy } from './outcome.js';
import { TerminalError } from '../definition/terminal-error.js';

const policy: RetryPolicy = { baseMs: 100, capMs: 10_000, maxAttempts: 5 };
const always = () => 1;
const first = { attempt: 1, streak: 0 };

describe('outcome → action', () => {
  it('acks a success and requeues after the asked delay', () => {
    assert.deepEqual(decide({ ok: true, result: undefined }, first, policy), { kind: 'ack' });
    assert.deepEqual(decide({ ok: true, result: { requeueAfterMs: 5_000 } }, first, policy), {
      kind: 'retry',
      delayMs: 5_000,
    });
  });

  it('retries errors with exponential backoff up to the cap', () => {
    const error = new Error('boom');
    const delays = [1, 2, 3, 4].map((attempt) => {
      const action = decide(
        { ok: false, error },
        { attempt, streak: attempt - 1 },
        policy,
        undefined,
        always,
      );
      if (action.kind !== 'retry') throw new Error(`expected a retry, got ${action.kind}`);
      return action.delayMs;
    });
    assert.deepEqual(delays, [100, 200, 400, 800]);
    const capped = decide(
      { ok: false, error },
      { attempt: 4, streak: 3 },
      { ...policy, capMs: 300, maxAttempts: 9 },
      undefined,
      always,
    );
    assert.deepEqual(capped, { kind: 'retry', delayMs: 300, error, budget: 9 });
  });

  it('dead-letters once the retry budget is spent', () => {
    const error = new Error('still broken');
    assert.deepEqual(decide({ ok: false, error }, { attempt: 5, streak: 4 }, policy), {
      kind: 'dead-letter',
      error,
    });
  });

  it('never dead-letters a transient failure, however long it lasts, and caps its backoff', () => {
    for (const error of [
      new KubeApiError(0, 'NoResponse', 'no answer from the apiserver: connect ECONNREFUSED'),
      new KubeApiError(503, 'ServiceUnavailable', 'apiserver answered 503'),
      new KubeApiError(429, 'TooManyRequests', 'apiserver answered 429'),
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('timeout'), { name: 'TimeoutError' }),
      // nats.js JetStreamApiError: a cluster with a node down cannot place an R3 stream
      Object.assign(new Error('no suitable peers for placement, peer offline'), {
        name: 'JetStreamApiError',
        status: 500,
      }),
    ]) {
      const action = decide(
        { ok: false, error },
        { attempt: 50, streak: 200 },
        policy,
        undefined,
        always,
      );
      assert.equal(action.kind, 'retry', error.message);
      assert.equal(action.kind === 'retry' && action.transient, true);
      assert.equal(action.kind === 'retry' && action.delayMs, policy.capMs);
    }
  });

  it('gives a failure the object causes (422 on its own write) a few tries, not the whole budget', () => {
    const error = new KubeApiError(422, 'Invalid', 'apiserver answered 422 Invalid');
    const retried = decide({ ok: false, error }, { attempt: 2, streak: 1 }, policy);
    assert.equal(retried.kind, 'retry');
    // what the "will retry" log line counts against: 2 of 3, not of the whole budget
    assert.equal(retried.kind === 'retry' && retried.budget, 3);
    assert.equal(
      decide({ ok: false, error }, { attempt: 3, streak: 2 }, policy).kind,
      'dead-letter',
    );
    assert.equal(
      decide({ ok: false, error }, { attempt: 1, streak: 0 }, { ...policy, objectAttempts: 1 })
        .kind,
      'dead-letter',
    );
  });

  it("waits out the operator's own RBAC refusing, past any budget, and flags it for an admin", () => {
    const error = new KubeApiError(
      403,
      'Forbidden',
      'apiserver answered 403 Forbidden: limitranges "tenant-defaults" is forbidden: User "system:serviceaccount:ops:op" cannot patch resource "limitranges" in API group "" in the namespace "team-a"',
    );
    const action = decide(
      { ok: false, error },
      { attempt: 50, streak: 200 },
      { ...policy, objectAttempts: 1 },
      undefined,
      always,
    );
    assert.deepEqual(action, {
      kind: 'retry',
      delayMs: policy.capMs,
      error,
      transient: true,
      forbidden: true,
    });
    // a policy's denial of the object's content is still the object's
    const denied = new KubeApiError(
      403,
      'Forbidden',
      "apiserver answered 403 Forbidden: configmaps \"bad\" is forbidden: ValidatingAdmissionPolicy 'no-bad' with binding 'no-bad' denied request: no bad keys",
    );
    assert.equal(
      decide({ ok: false, error: denied }, { attempt: 3, streak: 2 }, policy).kind,
      'dead-letter',
    );
  });

  it('never retries a TerminalError', () => {
    const error = new TerminalError('bad spec');
    const action = decide({ ok: false, error }, first, policy);
    assert.deepEqual(action, { kind: 'terminal', error });
    assert.equal(resultLabel(action), 'terminal_error');
  });

  it('waits out what an error says is under way, for the time it names, however long the streak', () => {
    const inFlight = Object.assign(new Error('claimed by another reconcile'), { waitMs: 42_000 });
    const wrapped = new Error('ctx.once failed', { cause: inFlight });
    // not the object's fault: no Event, no budget (a wait, whatever wraps it)
    assert.equal(classifyFailure(wrapped), 'transient');
    for (const error of [inFlight, wrapped])
      assert.deepEqual(
        decide({ ok: false, error }, { attempt: 4, streak: 9 }, policy, undefined, always),
        { kind: 'retry', delayMs: 42_000, error, transient: true, waiting: true },
      );
  });
});
