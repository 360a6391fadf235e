// A cluster-scoped owner with namespaced children (a Tenant owning a
// Namespace and a ConfigMap in it), on the test kit's real servers: an edit or
// a deletion of the child reconciles the owner — the key has no namespace —
// and the child is repaired within seconds, not at the next resync. A
// namespace another Tenant controls, or one an admin made, is not taken.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { waitFor } from '../support/wait.js';

const Tenant = defineResource({
  group: 'tenancy.test.kubebus.dev',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({ cpu: z.string().default('2'), namespace: z.string().optional() }),
  status: z.object({ namespace: z.string() }).partial(),
});

const tenants = defineOperator({
  name: 'tenants',
  for: Tenant,
  owns: [kinds.Namespace, kinds.ConfigMap],
  partitions: 4,
  async reconcile(tenant, ctx) {
    const namespace = tenant.spec.namespace ?? `tenant-${tenant.metadata.name}`;
    await ctx.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await ctx.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'limits', namespace },
      data: { cpu: tenant.spec.cpu },
    });
    return { status: { namespace } };
  },
});

describe('a cluster-scoped owner with namespaced children', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Tenant);
    await env.run(tenants);
  });
  after(() => env.stop());

  const limits = async () => (await env.get(kinds.ConfigMap, 'limits', 'tenant-acme'))?.data;

  it('repairs an edited and a deleted child of a cluster-scoped owner', async () => {
    await env.apply({
      apiVersion: 'tenancy.test.kubebus.dev/v1',
      kind: 'Tenant',
      metadata: { name: 'acme' },
      spec: { cpu: '4' },
    });
    await env.waitForCondition(Tenant, 'acme', { type: 'Ready' });
    assert.deepEqual(await limits(), { cpu: '4' });
    assert.equal((await env.get(Tenant, 'acme'))?.status?.namespace, 'tenant-acme');

    // drift by hand: the child's change is keyed to the Tenant (no namespace) and repaired
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'limits', namespace: 'tenant-acme' },
      data: { cpu: '999' },
    });
    await waitFor(
      async () => (await limits())?.['cpu'] === '4',
      'the edited child repaired',
      60_000,
    );

    await env.delete(kinds.ConfigMap, 'limits', 'tenant-acme');
    await waitFor(
      async () => (await limits())?.['cpu'] === '4',
      'the deleted child recreated',
      60_000,
    );
  });

  it('takes neither a namespace another Tenant controls nor one an admin made', async () => {
    const tenant = (name: string, namespace: string) =>
      env.apply({
        apiVersion: 'tenancy.test.kubebus.dev/v1',
        kind: 'Tenant',
        metadata: { name },
        spec: { namespace },
      });
    const refused = { type: 'Ready', status: 'False', reason: 'TerminalError' };
    // all Tenants apply with one field manager: without the check, beta's apply would have
    // replaced acme's controller reference with its own
    await tenant('beta', 'tenant-acme');
    const taken = await env.waitForCondition(Tenant, 'beta', refused);
    assert.match(
      taken.message ?? '',
      /^Namespace tenant-acme is already controlled by Tenant acme/,
    );
    const acmes = await env.get(kinds.Namespace, 'tenant-acme');
    assert.deepEqual(
      acmes?.metadata.ownerReferences?.map((ref) => ref.name),
      ['acme'],
    );

    await env.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'legacy' } });
    await tenant('gamma', 'legacy');
    const adopted = await env.waitForCondition(Tenant, 'gamma', refused);
    assert.match(
      adopted.message ?? '',
      /^Namespace legacy exists and was not made by the operator tenants: not adopted/,
    );
    const legacy = await env.get(kinds.Namespace, 'legacy');
    assert.equal(legacy?.metadata.ownerReferences, undefined);
    assert.equal(legacy?.metadata.labels?.['kubebus.dev/controller'], undefined);
  });
});
