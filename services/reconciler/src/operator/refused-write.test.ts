import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFailure } from '@kubebus/shared/errors';
import { KubeApiError } from '@kubebus/shared/kube';
import { explainedRefusal, grantedBy } from './refused-write.js';

const RBAC = 'rbac.authorization.k8s.io/v1';
const USER = 'system:serviceaccount:kubebus-system:kubebus-tenants-reconciler';

/** The apiserver's answer to a binding whose role holds rules its writer does not. */
const notHeld = (resource: string, rules: number) =>
  new KubeApiError(
    403,
    'Forbidden',
    [
      `apiserver answered 403 Forbidden: ${resource}.rbac.authorization.k8s.io "tenant-admins" is forbidden: user "${USER}" (groups=["system:serviceaccounts" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`,
      ...Array.from(
        { length: rules },
        (_, i) => `{APIGroups:[""], Resources:["kind${String(i)}"], Verbs:["get" "list"]}`,
      ),
    ].join('\n'),
    undefined,
    undefined,
    { name: 'tenant-admins', kind: resource },
  );

const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', role: string) => ({
  apiVersion: RBAC,
  kind,
  metadata: { name: 'tenant-admins', namespace: 'tenant-acme' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
});

describe('a write the operator’s RBAC refused', () => {
  it('names the role the binding grants and the bind to declare, without the list of rules', () => {
    const explained = explainedRefusal(
      notHeld('rolebindings', 40),
      binding('RoleBinding', 'edit'),
      undefined,
    );
    assert.ok(explained instanceof KubeApiError);
    assert.equal(explained.status, 403);
    assert.deepEqual(explained.details, { name: 'tenant-admins', kind: 'rolebindings' });
    assert.match(
      explained.message,
      /^the operator may not grant ClusterRole edit, whose rules it does not hold \(40 missing\); if it is meant to, declare `rbac: \{ bind: \[\{ kind: 'ClusterRole', name: 'edit' \}\] \}`, then apply the RBAC `kubebus generate` writes/,
    );
    assert.match(explained.message, /not currently held \(40 rules not held\)$/);
    assert.doesNotMatch(explained.message, /\n|APIGroups/);
    // still waited out until the RBAC is applied
    assert.equal(classifyFailure(explained), 'forbidden');
  });

  it('says only to apply the RBAC for a role the operator declares (the cluster has an older one)', () => {
    const declared = explainedRefusal(notHeld('rolebindings', 71), binding('RoleBinding', 'edit'), {
      bind: [{ kind: 'ClusterRole', name: 'edit' }],
    });
    assert.match(
      (declared as Error).message,
      /^the operator may not grant ClusterRole edit, .* \(71 missing\); it declares it in `rbac\.bind`, but the RBAC applied in the cluster does not grant that: apply the RBAC/,
    );
    // another role declared is not this one
    const other = explainedRefusal(notHeld('rolebindings', 71), binding('RoleBinding', 'edit'), {
      bind: [{ kind: 'ClusterRole', name: 'view' }],
    });
    assert.match((other as Error).message, /if it is meant to, declare/);
  });

  it('says clusterWide for a ClusterRoleBinding, escalate for a role it writes', () => {
    const wide = explainedRefusal(
      notHeld('clusterrolebindings', 2),
      binding('ClusterRoleBinding', 'view'),
      undefined,
    );
    assert.match((wide as Error).message, /name: 'view', clusterWide: true \}/);
    const role = {
      apiVersion: RBAC,
      kind: 'Role',
      metadata: { name: 'tenant-reader', namespace: 'tenant-acme' },
      rules: [],
    };
    assert.deepEqual(grantedBy(role), { kind: 'Role', name: 'tenant-reader' });
    assert.match(
      (explainedRefusal(notHeld('roles', 1), role, undefined) as Error).message,
      /escalate: \[\{ kind: 'Role', name: 'tenant-reader' \}\]/,
    );
  });

  it('leaves any other failure as it is', () => {
    const body = binding('RoleBinding', 'edit');
    const denied = new KubeApiError(
      403,
      '',
      'apiserver answered 403: admission webhook "deny.example.com" denied the request: no',
    );
    assert.equal(explainedRefusal(denied, body, undefined), denied);
    const invalid = new KubeApiError(422, 'Invalid', 'apiserver answered 422 Invalid: bad');
    assert.equal(explainedRefusal(invalid, body, undefined), invalid);
    const boom = new Error('boom');
    assert.equal(explainedRefusal(boom, body, undefined), boom);
    // a kind that grants nothing has no role to name
    assert.equal(
      grantedBy({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      undefined,
    );
  });
});
