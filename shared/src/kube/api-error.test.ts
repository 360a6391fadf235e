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
});
