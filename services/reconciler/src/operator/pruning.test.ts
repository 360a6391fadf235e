import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineOperator, kinds } from '@kubebus/shared/definition';
import { AppliedByOwner, mayHaveDropped, prunedKinds } from './pruning.js';
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

describe('what a reconcile that reports Ready=False leaves for the next one that prunes', () => {
  const set = (...keys: string[]) => new Set(keys);

  it('keeps what it applied, so a later reconcile that drops it prunes it', () => {
    const applied = new AppliedByOwner();
    applied.set('u', set('A', 'B'));
    applied.defer('u', set('C'), false);
    assert.deepEqual([...(applied.get('u') ?? [])].sort(), ['A', 'B', 'C']);
    assert.equal(applied.partial('u'), false, 'still a full set to prune against');
  });

  it('owes the next pruning reconcile the listing it would have made', () => {
    const applied = new AppliedByOwner();
    // no memory of the owner (a restart) and its spec changed: it would list, but is not done
    applied.defer('u', set(), true);
    assert.equal(applied.mustList('u'), true);
    // another not-ready reconcile, its status now says the generation was observed
    applied.defer('u', set('A'), false);
    assert.equal(applied.mustList('u'), true, 'still owed');
    applied.set('u', set('A'));
    assert.equal(applied.mustList('u'), false, 'paid by the reconcile that pruned');
  });

  it('counts memory from reconciles that did not prune as partial until one prunes', () => {
    const applied = new AppliedByOwner();
    applied.defer('u', set('A'), false);
    assert.equal(applied.partial('u'), true);
    applied.set('u', set('A'));
    assert.equal(applied.partial('u'), false);
    applied.forget('u');
    assert.equal(applied.get('u'), undefined);
  });
});

describe('with no memory of the owner (a restarted process), whether to list its children', () => {
  const owner = (generation: number, status: Record<string, unknown> | undefined) => ({
    apiVersion: 'example.kubebus.dev/v1',
    kind: 'Site',
    metadata: { name: 's', namespace: 'n', uid: 'u', resourceVersion: '1', generation },
    ...(status === undefined ? {} : { status }),
  });
  const ready = (value: 'True' | 'False') => [{ type: 'Ready', status: value }];

  it('lists when the spec changed since the last reconcile, not when it did not', () => {
    assert.equal(mayHaveDropped(owner(3, { observedGeneration: 2 }), undefined), true);
    assert.equal(
      mayHaveDropped(owner(3, { observedGeneration: 3, conditions: ready('True') }), undefined),
      false,
    );
  });

  it('lists when the last reconcile reported not ready: it deferred its pruning', () => {
    // the pruning it owed was remembered by the process that made it, gone since
    for (const status of ['False', 'Unknown'] as const)
      assert.equal(
        mayHaveDropped(
          owner(3, { observedGeneration: 3, conditions: [{ type: 'Ready', status }] }),
          undefined,
        ),
        true,
      );
  });
});
