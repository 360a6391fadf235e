import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineOperator, kinds } from '@kubebus/shared/definition';
import { prunedKinds } from './pruning.js';
import { Site } from './site-context.test-support.js';
const base = {
  name: 'site',
  for: Site,
  owns: [kinds.ConfigMap, kinds.Secret, kinds.Deployment],
  reconcile: async () => undefined,
};

describe('prunedKinds', () => {
  it('prunes every owned kind by default, none when off, all but the kept ones', () => {
    assert.deepEqual(
      prunedKinds(defineOperator(base)).map((kind) => kind.kind),
      ['ConfigMap', 'Secret', 'Deployment'],
    );
    assert.deepEqual(prunedKinds(defineOperator({ ...base, prune: false })), []);
    assert.deepEqual(
      prunedKinds(defineOperator({ ...base, prune: { keep: [kinds.Secret] } })).map((k) => k.kind),
      ['ConfigMap', 'Deployment'],
    );
  });
});
