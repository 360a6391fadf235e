import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rbacOf, rulesOf } from './rbac.js';
import { defineOperator, kinds, resource } from '@kubebus/shared/definition';
import { Site, Tenant, site } from './test-operators.js';

const verbs = (rules: ReturnType<typeof rulesOf>, resource: string) =>
  rules.filter((r) => r.resources.includes(resource)).flatMap((r) => r.verbs);

describe('rbacOf', () => {
  it('gives each role only the verbs its code sends', () => {
    assert.deepEqual(verbs(rulesOf(site, 'watcher'), 'sites'), ['list', 'watch']);
    assert.deepEqual(verbs(rulesOf(site, 'reconciler'), 'configmaps'), [
      'get',
      'create',
      'patch',
      'delete',
    ]);
    // patch: its finalizer, also taken off by a version without `finalize`
    assert.deepEqual(verbs(rulesOf(site, 'reconciler'), 'sites'), ['get', 'patch', 'list']);
    // the owner references it sets block the owner's deletion (OwnerReferencesPermissionEnforcement)
    assert.deepEqual(verbs(rulesOf(site, 'reconciler'), 'sites/finalizers'), ['update']);
    assert.deepEqual(verbs(rulesOf(site, 'watcher'), 'sites/finalizers'), []);
    assert.deepEqual(verbs(rulesOf(site, 'status-writer'), 'sites/status'), ['get', 'patch']);
    assert.deepEqual(verbs(rulesOf(site, 'status-writer'), 'configmaps'), []);
  });

  it('never lets the reconciler read Secrets, which the bus carries without their data', () => {
    const withSecrets = { ...site, owns: [...(site.owns ?? []), kinds.Secret] };
    assert.deepEqual(verbs(rulesOf(withSecrets, 'reconciler'), 'secrets'), [
      'create',
      'patch',
      'delete',
    ]);
  });

  it('binds Roles in the watched namespaces only, when given', () => {
    const kinds = rbacOf(site, 'ops', ['watcher'], ['a', 'b']).map(
      (o) =>
        `${(o as { kind: string }).kind}/${(o as { metadata: { namespace?: string } }).metadata.namespace ?? ''}`,
    );
    assert.deepEqual(kinds, [
      'ServiceAccount/ops',
      'Role/a',
      'RoleBinding/a',
      'Role/b',
      'RoleBinding/b',
      // cluster-wide whatever the install: TokenReviews have no namespace (/metrics)
      'ClusterRole/',
      'ClusterRoleBinding/',
      'ClusterRole/',
    ]);
  });

  it('grants what it owns also when a watch spells the same resource again', () => {
    const configMaps = resource({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      scope: 'Namespaced',
    });
    const owner = defineOperator({
      name: 'settings',
      for: Site,
      owns: [kinds.ConfigMap],
      watches: [{ resource: configMaps, map: () => [] }],
      async reconcile() {
        return undefined;
      },
    });
    assert.deepEqual(verbs(rulesOf(owner, 'reconciler'), 'configmaps'), [
      'get',
      'create',
      'patch',
      'delete',
    ]);
  });

  it('keeps what is cluster-scoped in a ClusterRole when it watches some namespaces', () => {
    const byNamespace = defineOperator({
      name: 'by-namespace',
      for: Site,
      watches: [{ resource: kinds.Namespace, map: () => [] }],
      owns: [kinds.ConfigMap, kinds.RoleBinding],
      rbac: {
        rules: [{ apiGroups: [''], resources: ['pods', 'namespaces', 'nodes'], verbs: ['get'] }],
        bind: [{ kind: 'ClusterRole', name: 'view' }],
      },
      async reconcile() {
        return undefined;
      },
    });
    const objects = rbacOf(byNamespace, 'ops', ['watcher', 'reconciler'], ['a']) as {
      kind: string;
      metadata: { name: string; namespace?: string };
      rules?: { resources: string[]; verbs: string[] }[];
    }[];
    const rulesIn = (kind: string, name: string) =>
      objects
        .filter((o) => o.kind === kind && o.metadata.name === name)
        .flatMap((o) => o.rules ?? [])
        .flatMap((r) => r.resources.map((resource) => `${resource}:${r.verbs.join('+')}`));
    // the watcher watches Namespaces cluster-wide: a Role in `a` could not grant it
    assert.deepEqual(rulesIn('ClusterRole', 'kubebus-by-namespace-watcher'), [
      'namespaces:list+watch',
    ]);
    assert.deepEqual(rulesIn('Role', 'kubebus-by-namespace-watcher'), [
      'sites:list+watch',
      'configmaps:list+watch',
      'rolebindings:list+watch',
    ]);
    // a declared rule is split by what it names (nodes: Kubernetes' own, cluster-scoped)
    assert.deepEqual(rulesIn('ClusterRole', 'kubebus-by-namespace-reconciler'), [
      'namespaces:get',
      'namespaces:get',
      'nodes:get',
    ]);
    const namespaced = rulesIn('Role', 'kubebus-by-namespace-reconciler');
    assert.ok(namespaced.includes('pods:get'));
    // bind on a ClusterRole is checked where the binding is: it stays in the namespace's Role
    assert.ok(namespaced.includes('clusterroles:bind'), namespaced.join());
    assert.ok(
      !rulesIn('Role', 'kubebus-by-namespace-reconciler').some((r) => r.startsWith('namespaces')),
    );
    assert.ok(
      objects.some(
        (o) =>
          o.kind === 'ClusterRoleBinding' && o.metadata.name === 'kubebus-by-namespace-watcher',
      ),
    );
  });

  describe('what the definition declares in rbac', () => {
    const tenants = defineOperator({
      name: 'tenants',
      for: Tenant,
      owns: [kinds.Namespace, kinds.RoleBinding, kinds.Role],
      rbac: {
        bind: [
          { kind: 'ClusterRole', name: 'edit' },
          { kind: 'ClusterRole', name: 'admin' },
          { kind: 'Role', name: 'reader' },
        ],
        escalate: [{ kind: 'Role', name: 'tenant-reader' }],
        rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
      },
      async reconcile() {
        return undefined;
      },
    });
    const rbacRules = (role: 'watcher' | 'reconciler' | 'status-writer') =>
      rulesOf(tenants, role).filter(
        (r) => r.verbs.includes('bind') || r.verbs.includes('escalate'),
      );

    it('gives the reconciler bind and escalate on exactly the named roles', () => {
      assert.deepEqual(rbacRules('reconciler'), [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles'],
          verbs: ['bind'],
          resourceNames: ['admin', 'edit'],
        },
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles'],
          verbs: ['bind'],
          resourceNames: ['reader'],
        },
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles'],
          verbs: ['escalate'],
          resourceNames: ['tenant-reader'],
        },
      ]);
      // roles it owns are still only applied (create, patch, delete), never bound or escalated at large
      assert.deepEqual(verbs(rulesOf(tenants, 'reconciler'), 'roles').sort(), [
        'bind',
        'create',
        'delete',
        'escalate',
        'get',
        'patch',
      ]);
      assert.ok(
        rulesOf(tenants, 'reconciler')
          .filter((r) => r.verbs.includes('bind') || r.verbs.includes('escalate'))
          .every((r) => (r.resourceNames?.length ?? 0) > 0),
        'a bind or escalate rule without resourceNames would cover every role',
      );
    });

    it('adds the declared rules to the reconciler only', () => {
      assert.deepEqual(verbs(rulesOf(tenants, 'reconciler'), 'pods/log'), ['get']);
      assert.deepEqual(verbs(rulesOf(tenants, 'watcher'), 'pods/log'), []);
      assert.deepEqual(verbs(rulesOf(tenants, 'status-writer'), 'pods/log'), []);
      assert.deepEqual(rbacRules('watcher'), []);
      assert.deepEqual(rbacRules('status-writer'), []);
    });

    it('ships the admission policy with the RBAC when the reconciler may bind or escalate', () => {
      const kindsOf = (objects: object[]) => objects.map((o) => (o as { kind: string }).kind);
      const shipped = kindsOf(rbacOf(tenants, 'ops', ['watcher', 'reconciler']));
      // last, three policies (subjects, namespaces, labels), each with its binding
      assert.deepEqual(
        shipped.slice(-6),
        Array.from({ length: 3 }, () => [
          'ValidatingAdmissionPolicy',
          'ValidatingAdmissionPolicyBinding',
        ]).flat(),
      );
      // a namespaced install keeps the fence: the grants are the same
      assert.ok(
        kindsOf(rbacOf(tenants, 'ops', ['reconciler'], ['a'])).includes(
          'ValidatingAdmissionPolicy',
        ),
      );
      // no reconciler here, or one that grants nothing it does not hold: no policy
      assert.ok(
        !kindsOf(rbacOf(tenants, 'ops', ['watcher'])).includes('ValidatingAdmissionPolicy'),
      );
      assert.ok(
        !kindsOf(rbacOf(site, 'ops', ['reconciler'])).includes('ValidatingAdmissionPolicy'),
      );
    });

    it('grants neither bind nor escalate when none is declared', () => {
      const owner = defineOperator({
        name: 'binder',
        for: Site,
        owns: [kinds.RoleBinding],
        async reconcile() {
          return undefined;
        },
      });
      const granted = ['watcher', 'reconciler', 'status-writer'] as const;
      for (const role of granted)
        assert.ok(
          rulesOf(owner, role).every(
            (r) => !r.verbs.includes('bind') && !r.verbs.includes('escalate'),
          ),
          role,
        );
    });
  });
});
