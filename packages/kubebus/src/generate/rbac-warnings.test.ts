import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineOperator, defineResource, kinds } from '@kubebus/shared/definition';
import { z } from 'zod';
import { rbacWarnings } from './rbac-warnings.js';

const Tenant = defineResource({
  group: 'tenancy.example.com',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({}),
  status: z.object({}),
});

const tenants = (owns: Parameters<typeof defineOperator>[0]['owns'], bind = false) =>
  defineOperator({
    name: 'tenants',
    for: Tenant,
    owns: owns ?? [],
    ...(bind ? { rbac: { bind: [{ kind: 'ClusterRole' as const, name: 'admin' }] } } : {}),
    async reconcile() {
      return undefined;
    },
  });

describe('the RBAC kubebus generate warns of', () => {
  it('is a binding owned without `rbac.bind`, one line per binding kind', () => {
    const [warning, ...others] = rbacWarnings(
      tenants([kinds.Namespace, kinds.RoleBinding, kinds.ClusterRoleBinding]),
    );
    assert.match(
      warning ?? '',
      /^operator "tenants" owns RoleBindings but declares no `rbac.bind`: .* e\.g\. `rbac: \{ bind: \[\{ kind: 'ClusterRole', name: 'edit' \}\] \}`/,
    );
    assert.match(others[0] ?? '', /owns ClusterRoleBindings/);
    assert.equal(others.length, 1);
  });

  it('is nothing when it declares what it grants, or owns no binding', () => {
    assert.deepEqual(rbacWarnings(tenants([kinds.Namespace, kinds.RoleBinding], true)), []);
    assert.deepEqual(rbacWarnings(tenants([kinds.Namespace, kinds.ConfigMap])), []);
  });

  it('is a role owned without `rbac.escalate`, one line per role kind', () => {
    const warnings = rbacWarnings(tenants([kinds.Namespace, kinds.Role, kinds.ClusterRole]));
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.match(
      warnings[0] ?? '',
      /^operator "tenants" owns Roles but declares no `rbac.escalate`: .* e\.g\. `rbac: \{ escalate: \[\{ kind: 'Role', name: 'tenant-reader' \}\] \}`/,
    );
    assert.match(warnings[1] ?? '', /owns ClusterRoles but declares no `rbac.escalate`/);
    const declared = defineOperator({
      name: 'tenants',
      for: Tenant,
      owns: [kinds.Role],
      rbac: { escalate: [{ kind: 'Role', name: 'tenant-reader' }] },
      async reconcile() {
        return undefined;
      },
    });
    assert.deepEqual(rbacWarnings(declared), []);
  });

  it('is Secrets watched or owned: the watcher may list them, values included, where it watches', () => {
    const sites = defineOperator({
      name: 'sites',
      for: Tenant,
      watches: [{ resource: kinds.Secret, references: () => [] }],
      async reconcile() {
        return undefined;
      },
    });
    const [everywhere] = rbacWarnings(sites);
    assert.match(everywhere ?? '', /may list and watch them in every namespace of the cluster/);
    assert.match(everywhere ?? '', /a list returns their values/);
    assert.match(rbacWarnings(sites, ['shop'])[0] ?? '', /may list and watch them in shop,/);
    assert.deepEqual(rbacWarnings(tenants([kinds.ConfigMap])), []);
    // owned only: watched by kubebus' label, so only its own reach the bus; the grant is the same
    const [owned] = rbacWarnings(tenants([kinds.Secret]));
    assert.match(owned ?? '', /owns Secrets: .*may list and watch them in every namespace/);
    assert.match(owned ?? '', /the bus records only the Secrets it made/);
  });

  it("is a rule of the operator's own reading Secrets by no name: every Secret of the cluster", () => {
    const reading = (rule: { resources: string[]; resourceNames?: string[] }) =>
      defineOperator({
        name: 'backups',
        for: Tenant,
        rbac: { rules: [{ apiGroups: [''], verbs: ['get'], ...rule }] },
        async reconcile() {
          return undefined;
        },
      });
    const [warning] = rbacWarnings(reading({ resources: ['secrets'] }));
    assert.match(warning ?? '', /declares a rule reading Secrets by no name/);
    assert.match(warning ?? '', /every Secret in every namespace of the cluster/);
    // named, or another kind, or granted only where it watches: nothing to say
    assert.deepEqual(rbacWarnings(reading({ resources: ['secrets'], resourceNames: ['db'] })), []);
    assert.deepEqual(rbacWarnings(reading({ resources: ['configmaps'] })), []);
    assert.deepEqual(rbacWarnings(reading({ resources: ['secrets'] }), ['team-a']), []);
  });
});
