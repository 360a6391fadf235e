import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markKubebusError, markOperatorError } from './error-origin.js';
import { classifyFailure } from './failure-class.js';

const refused = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
const timedOut = () => Object.assign(new Error('aborted'), { name: 'TimeoutError' });

describe('where a failure came from', () => {
  it('waits out a dependency’s outage that no operator code threw (the runtime’s own calls)', () => {
    assert.equal(classifyFailure(refused()), 'transient');
    assert.equal(classifyFailure(timedOut()), 'transient');
  });

  it('counts the operator’s own call refused or timing out against the object’s budget', () => {
    assert.equal(classifyFailure(markOperatorError(refused())), 'unknown');
    assert.equal(classifyFailure(markOperatorError(timedOut())), 'unknown');
    const waiting = Object.assign(new Error('busy'), { waitMs: 1_000 });
    assert.equal(classifyFailure(markOperatorError(waiting)), 'unknown');
  });

  it('keeps a ctx call’s outage kubebus’, rethrown or wrapped by the operator’s code', () => {
    const fromCtx = markKubebusError(refused());
    assert.equal(classifyFailure(markOperatorError(fromCtx)), 'transient');
    const wrapped = new Error('could not apply the Deployment', { cause: fromCtx });
    assert.equal(classifyFailure(markOperatorError(wrapped)), 'transient');
  });

  it('leaves an error the operator threw inside a ctx call (a ctx.once perform) the operator’s', () => {
    const own = markOperatorError(refused());
    assert.equal(classifyFailure(markKubebusError(own)), 'unknown');
  });

  it('reads the apiserver’s answers the same whoever threw them', () => {
    const unavailable = Object.assign(new Error('503'), { name: 'KubeApiError', status: 503 });
    assert.equal(classifyFailure(markOperatorError(unavailable)), 'transient');
  });
});
