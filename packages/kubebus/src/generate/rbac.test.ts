import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rbacOf, rulesOf } from './rbac.js';
import { kinds } from '@kubebus/shared/definition';
import { site } from './test-operators.js';

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
    assert.deepEqual(verbs(rulesOf(site, 'reconciler'), 'sites'), ['get', 'list']);
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
    ]);
  });
});
