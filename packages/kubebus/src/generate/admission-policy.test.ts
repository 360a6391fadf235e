// The admission policy that fences a reconciler which may bind or escalate:
// which requests it looks at, whose, and what each validation refuses. The
// CEL itself runs in the apiserver: test/e2e/rbac-bind.test.ts tries it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineOperator, kinds, type RuleVerb } from '@kubebus/shared/definition';
import { admissionPolicyOf, needsAdmissionPolicy, writesClusterRoles } from './admission-policy.js';
import { helmTemplate } from './helm-template.js';
import { yamlDocuments } from './yaml-documents.js';
import { Site, Tenant, site } from './test-operators.js';

const tenants = defineOperator({
  name: 'tenants',
  for: Tenant,
  owns: [kinds.Namespace, kinds.RoleBinding],
  rbac: { bind: [{ kind: 'ClusterRole', name: 'admin' }] },
  async reconcile() {
    return undefined;
  },
});

interface Policy {
  kind: string;
  metadata: { name: string };
  spec: {
    failurePolicy: string;
    policyName?: string;
    validationActions?: string[];
    matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
    matchConditions: { expression: string }[];
    validations: { expression: string; message: string; reason: string }[];
  };
}

const objects = admissionPolicyOf(tenants, 'ops') as Policy[];
const policies = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy');
const policy = (check: string) => {
  const found = policies.find((p) => p.metadata.name === `kubebus-tenants-reconciler-${check}`);
  assert.ok(found, check);
  return found;
};
const expression = (check: string) => policy(check).spec.validations[0]?.expression ?? '';

describe('admissionPolicyOf', () => {
  it('is needed only when the reconciler may bind or escalate', () => {
    assert.equal(needsAdmissionPolicy(tenants), true);
    assert.equal(needsAdmissionPolicy(site), false);
  });

  it("looks at the reconciler's own requests only, and refuses when it cannot evaluate", () => {
    for (const fence of policies) {
      assert.deepEqual(
        fence.spec.matchConditions.map((c) => c.expression),
        ["request.userInfo.username == 'system:serviceaccount:ops:kubebus-tenants-reconciler'"],
      );
      assert.equal(fence.spec.failurePolicy, 'Fail');
    }
  });

  it('checks each kind only with expressions its fields type-check against', () => {
    const matched = (check: string) =>
      policy(check).spec.matchConstraints.resourceRules.map(
        (r) => `${r.operations.join('+')} ${r.resources.join(',')}`,
      );
    assert.deepEqual(matched('subjects'), ['CREATE+UPDATE rolebindings,clusterrolebindings']);
    assert.deepEqual(matched('cluster-wide'), ['CREATE+UPDATE clusterrolebindings']);
    assert.deepEqual(matched('namespaces'), ['CREATE+UPDATE roles,rolebindings']);
    assert.deepEqual(matched('own-namespaces'), ['UPDATE+DELETE namespaces']);
  });

  it('refuses with Forbidden, each binding denies', () => {
    const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
    assert.deepEqual(
      bindings.map((b) => b.spec.policyName),
      policies.map((p) => p.metadata.name),
    );
    assert.ok(bindings.every((b) => b.spec.validationActions?.join() === 'Deny'));
    assert.ok(policies.every((p) => p.spec.validations.every((v) => v.reason === 'Forbidden')));
  });

  it("fences its own namespace's accounts, system: subjects and the system namespaces", () => {
    assert.match(expression('subjects'), /s\.kind == 'ServiceAccount' && .* == 'ops'/);
    assert.match(expression('subjects'), /s\.name\.startsWith\('system:'\)/);
    assert.match(
      expression('namespaces'),
      /request\.namespace in \['kube-system', 'kube-public', 'kube-node-lease', 'ops'\]/,
    );
    assert.match(
      expression('namespaces'),
      /namespaceObject\.metadata\.labels\['app\.kubernetes\.io\/managed-by'\] == 'kubebus'/,
    );
    assert.match(expression('own-namespaces'), /oldObject\.metadata\.labels/);
    assert.match(
      expression('own-namespaces'),
      /!\(oldObject\.metadata\.name in \['kube-system', 'kube-public', 'kube-node-lease', 'default', 'ops'\]\)$/,
    );
  });

  it('keeps one that owns Namespaces to those it made; one that does not, from labelling one its own', () => {
    // tenants owns Namespaces: changing or deleting one needs it to be its own
    assert.ok(!policies.some((p) => p.metadata.name.endsWith('-labels')));
    // an operator that binds but cannot change Namespaces: only the labelling is fenced
    const binder = defineOperator({
      name: 'binder',
      for: Site,
      owns: [kinds.RoleBinding],
      rbac: { bind: [{ kind: 'Role', name: 'deployer' }] },
      async reconcile() {
        return undefined;
      },
    });
    const names = (admissionPolicyOf(binder, 'ops') as Policy[]).map((p) => p.metadata.name);
    assert.ok(names.includes('kubebus-binder-reconciler-labels'), names.join());
    assert.ok(!names.includes('kubebus-binder-reconciler-own-namespaces'), names.join());
    // owning Namespaces alone, with nothing to grant, still fences them
    const owner = defineOperator({
      name: 'owner',
      for: Tenant,
      owns: [kinds.Namespace],
      async reconcile() {
        return undefined;
      },
    });
    assert.equal(needsAdmissionPolicy(owner), true);
    assert.deepEqual(
      (admissionPolicyOf(owner, 'ops') as Policy[])
        .filter((p) => p.kind === 'ValidatingAdmissionPolicy')
        .map((p) => p.metadata.name),
      ['kubebus-owner-reconciler-own-namespaces'],
    );
  });

  it("fences the namespaces this operator made, not another kubebus operator's", () => {
    for (const [check, metadata] of [
      ['namespaces', 'namespaceObject.metadata'],
      ['own-namespaces', 'oldObject.metadata'],
    ] as const)
      assert.ok(
        expression(check).includes(`${metadata}.labels['kubebus.dev/controller'] == 'tenants'`),
        `${check}: ${metadata}`,
      );
  });

  it('refuses a ClusterRoleBinding to a role it binds without holding, and only then', () => {
    assert.equal(
      expression('cluster-wide'),
      "!(object.roleRef.kind == 'ClusterRole' && object.roleRef.name in ['admin'])",
    );
    // a Role in bind can never be bound cluster-wide: no policy for it
    const roleOnly = defineOperator({
      name: 'team-roles',
      for: Site,
      owns: [kinds.RoleBinding],
      rbac: { bind: [{ kind: 'Role', name: 'deployer' }] },
      async reconcile() {
        return undefined;
      },
    });
    const names = (admissionPolicyOf(roleOnly, 'ops') as Policy[]).map((p) => p.metadata.name);
    assert.ok(!names.some((name) => name.endsWith('-cluster-wide')), names.join());
    assert.ok(names.includes('kubebus-team-roles-reconciler-namespaces'));
    // nor for a ClusterRole declared clusterWide: the operator says it grants it everywhere
    const viewers = defineOperator({
      name: 'viewers',
      for: Tenant,
      owns: [kinds.RoleBinding, kinds.ClusterRoleBinding],
      rbac: {
        bind: [
          { kind: 'ClusterRole', name: 'view', clusterWide: true },
          { kind: 'ClusterRole', name: 'admin' },
        ],
      },
      async reconcile() {
        return undefined;
      },
    });
    const wide = (admissionPolicyOf(viewers, 'ops') as Policy[]).find((p) =>
      p.metadata.name.endsWith('-cluster-wide'),
    );
    assert.match(wide?.spec.validations[0]?.expression ?? '', /in \['admin'\]\)$/);
  });

  it('fences a reconciler that may write ClusterRoles against labels an aggregating role selects by', () => {
    const readers = defineOperator({
      name: 'readers',
      for: Tenant,
      owns: [kinds.ClusterRole],
      async reconcile() {
        return undefined;
      },
    });
    // owning ClusterRoles is enough, bind or escalate or not: it could label its own rules into view
    assert.equal(needsAdmissionPolicy(readers), true);
    const fences = (admissionPolicyOf(readers, 'ops') as Policy[]).filter(
      (o) => o.kind === 'ValidatingAdmissionPolicy',
    );
    assert.deepEqual(
      fences.map((p) => p.metadata.name),
      ['kubebus-readers-reconciler-aggregation'],
    );
    const fence = fences[0];
    assert.deepEqual(
      fence?.spec.matchConstraints.resourceRules.map(
        (r) => `${r.operations.join('+')} ${r.resources.join(',')}`,
      ),
      ['CREATE+UPDATE clusterroles'],
    );
    assert.equal(
      fence?.spec.validations[0]?.expression,
      "!has(object.metadata.labels) || object.metadata.labels.all(k, k.startsWith('kubebus.dev/') || k.startsWith('app.kubernetes.io/'))",
    );
    // so is a declared rule that writes ClusterRoles, and one that only reads them is not
    const declared = (verbs: RuleVerb[]) =>
      defineOperator({
        name: 'declared',
        for: Site,
        rbac: {
          rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs }],
        },
        async reconcile() {
          return undefined;
        },
      });
    assert.equal(writesClusterRoles(declared(['patch'])), true);
    assert.equal(writesClusterRoles(declared(['get'])), false);
    assert.equal(needsAdmissionPolicy(declared(['get'])), false);
    // beside bind, both kinds of fence
    const names = (
      admissionPolicyOf(
        defineOperator({
          name: 'both',
          for: Tenant,
          owns: [kinds.ClusterRole, kinds.RoleBinding],
          rbac: { bind: [{ kind: 'ClusterRole', name: 'admin' }] },
          async reconcile() {
            return undefined;
          },
        }),
        'ops',
      ) as Policy[]
    ).map((p) => p.metadata.name);
    assert.ok(names.includes('kubebus-both-reconciler-aggregation'), names.join());
    assert.ok(names.includes('kubebus-both-reconciler-subjects'), names.join());
  });

  it("takes the chart's namespace in a Helm template", () => {
    const yaml = helmTemplate(yamlDocuments(admissionPolicyOf(tenants, '«.Release.Namespace»')));
    assert.match(
      yaml,
      /system:serviceaccount:\{\{ \.Release\.Namespace \}\}:kubebus-tenants-reconciler'/,
    );
    assert.doesNotMatch(yaml, /«|»/);
  });
});
