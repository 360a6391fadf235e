// A watch says which primaries a change concerns in exactly one way: map (from
// the changed object) or references (from each primary). One with neither
// would watch and mark nothing, silently; one with both would be ambiguous.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import * as kinds from './kinds.js';
import { defineOperator } from './operator.js';
import { defineResource } from './resource.js';

const App = defineResource({
  group: 'apps.example.com',
  version: 'v1',
  kind: 'App',
  scope: 'Namespaced',
  spec: z.object({ secret: z.string() }),
  status: z.object({}),
});

const withWatch = (watch: object) =>
  defineOperator({
    name: 'apps',
    for: App,
    watches: [watch as never],
    reconcile: () => Promise.resolve(undefined),
  });

describe('defineOperator watches', () => {
  it('takes a watch with map or with references', () => {
    withWatch({ resource: kinds.Secret, map: () => [] });
    const typed = defineOperator({
      name: 'apps',
      for: App,
      // the primary comes typed: its spec as the schema says
      watches: [{ resource: kinds.Secret, references: (app) => [{ name: app.spec.secret }] }],
      reconcile: () => Promise.resolve(undefined),
    });
    assert.equal(typed.watches?.length, 1);
  });

  it('refuses a watch with neither, or both', () => {
    for (const watch of [
      { resource: kinds.Secret },
      { resource: kinds.Secret, map: () => [], references: () => [] },
    ])
      assert.throws(
        () => withWatch(watch),
        /watches\[0\] \(Secret\) needs either map or references, not both/,
      );
  });
});
