// What an operator owns carries its controller owner reference, which
// Kubernetes allows only from an object to an owner in its namespace or a
// cluster-scoped one: a namespaced primary owning a cluster-scoped kind would
// make objects nothing prunes, collects or maps back, so it is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import * as kinds from './kinds.js';
import { defineOperator } from './operator.js';
import { defineResource, type CustomResource, type Resource } from './resource.js';

const resourceIn = (scope: 'Namespaced' | 'Cluster') =>
  defineResource({
    group: 'apps.example.com',
    version: 'v1',
    kind: scope === 'Cluster' ? 'Tenant' : 'App',
    scope,
    spec: z.object({}),
    status: z.object({}),
  });

const owning = (primary: CustomResource, owns: Resource[]) =>
  defineOperator({
    name: 'owner',
    for: primary,
    owns,
    reconcile: () => Promise.resolve(undefined),
  });

describe('defineOperator owns', () => {
  it('refuses a cluster-scoped kind owned by a namespaced primary, naming both and the way out', () => {
    for (const owned of [kinds.Namespace, kinds.ClusterRole, kinds.ClusterRoleBinding])
      assert.throws(
        () => owning(resourceIn('Namespaced'), [kinds.ConfigMap, owned]),
        new RegExp(
          `App is namespaced, so it cannot own ${owned.kind} objects .*make App cluster-scoped, or keep ${owned.kind} out of owns`,
        ),
      );
  });

  it('takes namespaced kinds under either primary, and cluster-scoped ones under a cluster-scoped one', () => {
    owning(resourceIn('Namespaced'), [kinds.ConfigMap, kinds.Secret, kinds.RoleBinding]);
    owning(resourceIn('Cluster'), [kinds.Namespace, kinds.ClusterRole, kinds.ConfigMap]);
  });
});
