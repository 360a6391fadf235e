import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
