import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFailure } from '../errors/failure-class.js';
import { apiErrorFrom } from './api-error.js';

describe('an apiserver error', () => {
  it("keeps the continue token of a 410 Expired list's Status", () => {
    const error = apiErrorFrom(
      410,
      JSON.stringify({
        kind: 'Status',
        reason: 'Expired',
        message: 'too old resource version',
        metadata: { continue: 'fresh' },
      }),
      {},
    );
    assert.equal(error.status, 410);
    assert.equal(error.continueToken, 'fresh');
    assert.equal(
      apiErrorFrom(410, '{"reason":"Expired","metadata":{}}', {}).continueToken,
      undefined,
    );
  });

  it("waits out a namespace not there yet; any other 404 is the object's", () => {
    const status = (details: object) =>
      JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'not found', details });
    // what the apiserver answers an apply into a namespace that does not exist
    const noNamespace = apiErrorFrom(404, status({ name: 'later', kind: 'namespaces' }), {});
    assert.deepEqual(noNamespace.details, { name: 'later', kind: 'namespaces' });
    assert.equal(classifyFailure(noNamespace), 'transient');
    const noObject = apiErrorFrom(404, status({ name: 'gone', kind: 'configmaps' }), {});
    assert.equal(classifyFailure(noObject), 'object');
    assert.equal(classifyFailure(apiErrorFrom(404, 'page not found', {})), 'object');
  });

  it("takes a body the schema refuses as the object's fault, other 500s as the server's", () => {
    // what the apiserver answers a server-side apply with a field its schema does not declare
    const undeclared = apiErrorFrom(
      500,
      JSON.stringify({
        kind: 'Status',
        reason: 'InternalError',
        message:
          'Internal error occurred: failed to create typed patch object (team-alpha/limits; /v1, Kind=LimitRange): .spec.limits[0]._default: field not declared in schema',
      }),
      {},
    );
    assert.equal(classifyFailure(undeclared), 'object');
    assert.equal(undeclared.retryable, false);
    const overloaded = apiErrorFrom(
      500,
      JSON.stringify({
        kind: 'Status',
        reason: 'InternalError',
        message: 'etcdserver: leader changed',
      }),
      {},
    );
    assert.equal(classifyFailure(overloaded), 'transient');
    assert.equal(overloaded.retryable, true);
  });
});
