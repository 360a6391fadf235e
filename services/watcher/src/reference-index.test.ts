// The index of what primaries reference: replaced on each change of a
// primary, emptied when it goes, and a cluster-scoped referenced kind keyed
// without a namespace.
import type { KubeObject } from '@kubebus/shared/events';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ReferenceIndex } from './reference-index.js';

const primary = (name: string, refs: readonly string[], namespace = 'ns'): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'App',
  metadata: { name, namespace, uid: name, resourceVersion: '1' },
  spec: { refs },
});

const refsOf = (object: KubeObject) =>
  ((object['spec'] as { refs: string[] }).refs ?? []).map((name) => ({ name }));

describe('the reference index', () => {
  it('answers exactly the primaries whose last references name an object', () => {
    // any sequence of updates and removals: the index agrees with the last state of each primary
    const names = fc.constantFrom('a', 'b', 'c');
    const step = fc.record({
      primary: fc.constantFrom('p1', 'p2', 'p3'),
      refs: fc.array(names, { maxLength: 3 }),
      remove: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 20 }), (steps) => {
        const index = new ReferenceIndex(true, refsOf);
        const last = new Map<string, readonly string[]>();
        for (const { primary: name, refs, remove } of steps) {
          if (remove) {
            index.remove('ns', name);
            last.delete(name);
          } else {
            index.update(primary(name, refs));
            last.set(name, refs);
          }
        }
        for (const referenced of ['a', 'b', 'c']) {
          const expected = [...last]
            .filter(([, refs]) => refs.includes(referenced))
            .map(([p]) => p);
          const found = index.referrers('ns', referenced).map((r) => r.name);
          assert.deepEqual(found.sort(), expected.sort());
        }
        assert.equal(index.size, [...last.values()].filter((refs) => refs.length > 0).length);
      }),
    );
  });

  it('keys a cluster-scoped referenced kind by name alone, and skips what a cluster-scoped primary cannot place', () => {
    const cluster = new ReferenceIndex(false, refsOf);
    cluster.update(primary('p', ['reader']));
    assert.deepEqual(cluster.referrers('', 'reader'), [{ namespace: 'ns', name: 'p' }]);
    // a cluster-scoped primary naming a namespaced object without its namespace
    const namespaced = new ReferenceIndex(true, refsOf);
    namespaced.update(primary('q', ['x'], ''));
    assert.equal(namespaced.size, 0);
  });
});
