import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { labelSelector } from './label-selector.js';

describe('labelSelector', () => {
  const labels = { app: 'web', tier: 'front', env: 'prod' };

  it('matches equality, inequality, sets and existence, all required', () => {
    assert.ok(labelSelector(undefined)(labels));
    assert.ok(labelSelector('app=web')(labels));
    assert.ok(labelSelector('app==web,tier!=db')(labels));
    assert.ok(labelSelector('env in (prod, staging),app')(labels));
    assert.ok(labelSelector('env notin (dev),!legacy')(labels));
    assert.ok(!labelSelector('app=web,tier=db')(labels));
    assert.ok(!labelSelector('env in (dev,staging)')(labels));
    assert.ok(!labelSelector('legacy')(labels));
    assert.ok(!labelSelector('!app')(labels));
    assert.ok(labelSelector('missing!=x')(labels)); // as the apiserver: absent is not equal
  });

  it('refuses what it cannot read, naming it', () => {
    assert.throws(() => labelSelector('app=web,==x'), /cannot read the label selector/);
  });
});
