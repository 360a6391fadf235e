import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keptAfterDelete, type DeleteAnswer } from './owned-objects.js';

const at = '2026-12-06T03:00:00Z';

describe('whether the apiserver kept what a DELETE answered', () => {
  it('kept: marked, and held by a finalizer', () => {
    assert.equal(
      keptAfterDelete({ metadata: { uid: 'u', deletionTimestamp: at, finalizers: ['x/y'] } }),
      true,
    );
  });

  it('kept: a pod in its grace period', () => {
    assert.equal(
      keptAfterDelete({
        metadata: { uid: 'u', deletionTimestamp: at, deletionGracePeriodSeconds: 30 },
      }),
      true,
    );
  });

  it('gone: a pod deleted at once is answered marked, with a grace of 0 and no finalizer', () => {
    assert.equal(
      keptAfterDelete({
        metadata: {
          uid: 'u',
          deletionTimestamp: at,
          deletionGracePeriodSeconds: 0,
          finalizers: [],
        },
      }),
      false,
    );
  });

  it('kept: a Namespace, held by its own finalizer until what is in it is gone', () => {
    // the DELETE's answer as kube-apiserver 1.37 gives it, first and every time after
    const answer = JSON.parse(
      '{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"held","uid":"370e7656-f871-4da7-8983-2b573dd83150","resourceVersion":"225","creationTimestamp":"2026-12-06T20:14:20Z","deletionTimestamp":"2026-12-06T20:14:20Z","labels":{"kubernetes.io/metadata.name":"held"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Terminating"}}',
    ) as DeleteAnswer;
    assert.equal(keptAfterDelete(answer), true);
    // its finalizer done, still Terminating for a moment: kept
    assert.equal(keptAfterDelete({ ...answer, spec: { finalizers: [] } }), true);
  });

  it('gone: an object answered unmarked, a Status, or nothing', () => {
    assert.equal(keptAfterDelete({ metadata: { uid: 'u' } }), false);
    assert.equal(keptAfterDelete({ details: { uid: 'u' } }), false);
    assert.equal(keptAfterDelete(undefined), false);
  });
});
