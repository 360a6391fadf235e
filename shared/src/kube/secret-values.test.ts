import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutSecretValues } from './secret-values.js';

describe('withoutSecretValues', () => {
  it('drops a core Secret’s data and stringData, and leaves any other object as it is', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db' },
      type: 'Opaque',
      data: { password: 'c2VjcmV0' },
      stringData: { user: 'app' },
    };
    assert.deepEqual(withoutSecretValues(secret), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db' },
      type: 'Opaque',
    });
    const config = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1' },
    };
    assert.equal(withoutSecretValues(config), config);
    // a kind named Secret in another group is not a core Secret
    const other = { apiVersion: 'vault.example.com/v1', kind: 'Secret', data: { x: '1' } };
    assert.equal(withoutSecretValues(other), other);
    assert.equal(withoutSecretValues(undefined), undefined);
  });
});
