import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide } from '../runtime/outcome.js';
import { markKubebusError, markOperatorError } from './error-origin.js';
import { classifyFailure } from './failure-class.js';

const refused = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
/** fetch's own timeout: AbortSignal.timeout's reason */
const fetchTimedOut = () =>
  new DOMException('The operation was aborted due to timeout', 'TimeoutError');
/** nats.js' request timeout: what setup's NATS connection (host.nats) throws */
const natsTimedOut = () => Object.assign(new Error('timeout'), { name: 'TimeoutError' });

describe('where a failure came from', () => {
  it('waits out a dependency’s outage that no operator code threw (the runtime’s own calls)', () => {
    assert.equal(classifyFailure(refused()), 'transient');
    assert.equal(classifyFailure(natsTimedOut()), 'transient');
  });

  it('calls the operator’s own call refused or timing out an outside system’s outage', () => {
    assert.equal(classifyFailure(markOperatorError(refused())), 'external');
    assert.equal(classifyFailure(markOperatorError(fetchTimedOut())), 'external');
    const headersLate = new TypeError('fetch failed', {
      cause: Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
    });
    assert.equal(classifyFailure(markOperatorError(headersLate)), 'external');
    // a wait it names is not kubebus' to honour
    const waiting = Object.assign(new Error('busy'), { waitMs: 1_000 });
    assert.equal(classifyFailure(markOperatorError(waiting)), 'unknown');
  });

  it('counts NATS not answering through setup’s connection as an outside system’s outage', () => {
    assert.equal(classifyFailure(markOperatorError(natsTimedOut())), 'external');
    const noLeader = Object.assign(new Error('no leader'), {
      name: 'JetStreamApiError',
      status: 503,
    });
    assert.equal(classifyFailure(markOperatorError(noLeader)), 'external');
  });

  it('leaves another library’s timeouts and 5xx answers the object’s failures (the usual budget)', () => {
    const ky = Object.assign(new Error('Request timed out: POST https://api'), {
      name: 'TimeoutError',
    });
    const octokit = Object.assign(new Error('Service Unavailable'), {
      name: 'HttpError',
      status: 503,
    });
    const sdk = Object.assign(new Error('500 Internal'), {
      name: 'InternalServerError',
      status: 500,
    });
    const login = Object.assign(new Error('Login failed for user'), {
      name: 'ConnectionError',
      code: 'ELOGIN',
    });
    for (const error of [ky, octokit, sdk, login])
      assert.equal(classifyFailure(markOperatorError(error)), 'unknown', error.name);
  });

  it('keeps a ctx call’s outage kubebus’, rethrown or wrapped by the operator’s code', () => {
    const fromCtx = markKubebusError(refused());
    assert.equal(classifyFailure(markOperatorError(fromCtx)), 'transient');
    const wrapped = new Error('could not apply the Deployment', { cause: fromCtx });
    assert.equal(classifyFailure(markOperatorError(wrapped)), 'transient');
  });

  it('leaves an error the operator threw inside a ctx call (a ctx.once perform) the operator’s', () => {
    const own = markOperatorError(refused());
    assert.equal(classifyFailure(markKubebusError(own)), 'external');
  });

  it('reads the apiserver’s answers the same whoever threw them', () => {
    const unavailable = Object.assign(new Error('503'), { name: 'KubeApiError', status: 503 });
    assert.equal(classifyFailure(markOperatorError(unavailable)), 'transient');
  });

  it('retries an outside system’s outage without limit, each try counted, never a dead letter', () => {
    const policy = { baseMs: 10, capMs: 1_000, maxAttempts: 3 };
    const action = decide(
      { ok: false, error: markOperatorError(refused()) },
      { attempt: 50, streak: 49 },
      policy,
    );
    assert.equal(action.kind, 'retry');
    assert.ok(
      action.kind === 'retry' && action.external === true && action.transient === undefined,
    );
  });

  it('spends no budget on an outside system’s outage: what fails after it gets the whole budget', () => {
    const policy = { baseMs: 10, capMs: 1_000, maxAttempts: 10 };
    const startingUp = {
      ok: false as const,
      error: new Error('the database system is starting up'),
    };
    // 20 tries the database refused, then its first error answer: retried, not parked
    assert.equal(
      decide(startingUp, { attempt: 21, streak: 20, external: 20 }, policy).kind,
      'retry',
    );
    // ten counted beside them: parked
    assert.equal(
      decide(startingUp, { attempt: 30, streak: 29, external: 20 }, policy).kind,
      'dead-letter',
    );
  });
});
