// The rbac declaration is checked when the operator is defined: each mistake
// is one line naming the field, before any RBAC is generated from it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import * as kinds from './kinds.js';
import { defineOperator } from './operator.js';
import type { OperatorRbac } from './rbac.js';
import { defineResource, type Resource } from './resource.js';

const Tenant = defineResource({
  group: 'tenancy.example.com',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({}),
  status: z.object({}),
});

const define = (rbac: OperatorRbac, owns: readonly Resource[] = [kinds.RoleBinding]) =>
  defineOperator({
    name: 'tenants',
    for: Tenant,
    owns,
    rbac,
    async reconcile() {
      return undefined;
    },
  });

describe('defineOperator rbac', () => {
  it('takes roles it binds, roles it escalates and extra rules', () => {
    const operator = define(
      {
        bind: [{ kind: 'ClusterRole', name: 'system:aggregate-to-admin', clusterWide: true }],
        escalate: [{ kind: 'ClusterRole', name: 'tenant-reader' }],
        rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'], resourceNames: ['a'] }],
      },
      [kinds.ClusterRoleBinding, kinds.ClusterRole],
    );
    assert.equal(operator.rbac?.bind?.[0]?.name, 'system:aggregate-to-admin');
  });

  it('refuses to bind or escalate roles no owned kind can reach', () => {
    assert.throws(
      () => define({ bind: [{ kind: 'ClusterRole', name: 'admin' }] }, [kinds.ConfigMap]),
      /^TypeError: defineOperator: rbac\.bind\[0\]: binding ClusterRole admin needs kinds\.RoleBinding in owns \(or kinds\.ClusterRoleBinding and clusterWide: true\)$/,
    );
    // a ClusterRoleBinding grants cluster-wide: only a role declared so
    assert.throws(
      () => define({ bind: [{ kind: 'ClusterRole', name: 'view' }] }, [kinds.ClusterRoleBinding]),
      /rbac\.bind\[0\]: binding ClusterRole view needs kinds\.RoleBinding in owns/,
    );
    assert.throws(
      () => define({ bind: [{ kind: 'ClusterRole', name: 'view', clusterWide: true }] }),
      /rbac\.bind\[0\]: granting view cluster-wide needs kinds\.ClusterRoleBinding in owns/,
    );
    assert.throws(
      () => define({ bind: [{ kind: 'Role', name: 'reader', clusterWide: true }] }),
      /rbac\.bind\[0\]\.clusterWide: only a ClusterRole in bind/,
    );
    // a Role can only be granted by a RoleBinding
    assert.throws(
      () => define({ bind: [{ kind: 'Role', name: 'reader' }] }, [kinds.ClusterRoleBinding]),
      /rbac\.bind\[0\]: binding Role reader needs kinds\.RoleBinding in owns/,
    );
    assert.throws(
      () => define({ escalate: [{ kind: 'ClusterRole', name: 'x' }] }, [kinds.Role]),
      /rbac\.escalate\[0\]: escalating ClusterRole x needs kinds\.ClusterRole in owns/,
    );
  });

  it('refuses names that are not one role', () => {
    for (const name of ['', '*', 'a/b', '..', 'a b'])
      assert.throws(
        () => define({ bind: [{ kind: 'ClusterRole', name }] }),
        /rbac\.bind\[0\]\.name: .* is not a role name/,
        JSON.stringify(name),
      );
  });

  it('refuses wildcards, empty lists and bind or escalate in rules', () => {
    const rule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] } as const;
    assert.throws(
      () => define({ rules: [{ ...rule, resources: ['*'] }] }),
      /rbac\.rules\[0\]\.resources: name them instead of '\*'/,
    );
    assert.throws(
      () => define({ rules: [{ ...rule, verbs: [] }] }),
      /rbac\.rules\[0\]\.verbs must not be empty/,
    );
    assert.throws(
      // the type refuses it too; this is what a JavaScript author sees
      () => define({ rules: [{ ...rule, verbs: ['bind' as 'get'] }] }),
      /rbac\.rules\[0\]\.verbs: "bind" is not grantable here \(declare the roles in rbac\.bind\)/,
    );
  });

  it("refuses wildcards inside a name: '*/status', 'pods/*', '*' groups", () => {
    const rule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] } as const;
    for (const resources of [['*/status'], ['pods/*'], ['pods', 'deployments*']])
      assert.throws(
        () => define({ rules: [{ ...rule, resources }] }),
        /rbac\.rules\[0\]\.resources: name them instead of '\*'/,
        resources.join(','),
      );
    assert.throws(
      () => define({ rules: [{ ...rule, apiGroups: ['*.k8s.io'] }] }),
      /rbac\.rules\[0\]\.apiGroups: name them instead of '\*'/,
    );
  });

  it('refuses resourceNames with verbs it does not limit (list, watch, create)', () => {
    const named = { apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] };
    for (const verb of ['list', 'watch', 'create', 'deletecollection'] as const)
      assert.throws(
        () => define({ rules: [{ ...named, verbs: ['get', verb] }] }),
        new RegExp(`rbac\\.rules\\[0\\]: resourceNames does not limit ${verb}: put it in a rule`),
        verb,
      );
    // the verbs a name does limit stay allowed
    const operator = define({ rules: [{ ...named, verbs: ['get', 'update', 'patch', 'delete'] }] });
    assert.deepEqual(operator.rbac?.rules?.[0]?.resourceNames, ['settings']);
  });

  it('refuses a role in both bind and escalate: together they are cluster-admin', () => {
    assert.throws(
      () =>
        define(
          {
            bind: [{ kind: 'ClusterRole', name: 'tenant-admin' }],
            escalate: [{ kind: 'ClusterRole', name: 'tenant-admin' }],
          },
          [kinds.RoleBinding, kinds.ClusterRole],
        ),
      /^TypeError: defineOperator: rbac\.bind\[0\]: "tenant-admin" is in escalate too: .*cluster-admin/,
    );
    // distinct roles are fine: it writes one and grants another
    const operator = define(
      {
        bind: [{ kind: 'ClusterRole', name: 'admin' }],
        escalate: [{ kind: 'ClusterRole', name: 'tenant-reader' }],
      },
      [kinds.RoleBinding, kinds.ClusterRole],
    );
    assert.equal(operator.rbac?.escalate?.[0]?.name, 'tenant-reader');
  });
});
