// A write into a namespace being deleted is waited out, not dead-lettered:
// a cluster-scoped Tenant owns its Namespace and a ConfigMap in it; the
// Namespace is deleted while a foreign finalizer holds it terminating, so
// every apply into it is refused (403, NamespaceTerminating). The reconciler
// retries past its attempt budget without a dead letter, and once the
// Namespace is gone it makes it again, with its ConfigMap.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { busRecordOf } from '../support/bus-record.js';
import { waitFor } from '../support/wait.js';

const Tenant = defineResource({
  group: 'tenancy.test.kubebus.dev',
  version: 'v1',
  kind: 'Tenant',
  scope: 'Cluster',
  spec: z.object({}),
  status: z.object({ namespace: z.string() }).partial(),
});

/** A kind installed once the servers run: its owners' dependents are garbage-collected too. */
const Claim = defineResource({
  group: 'tenancy.test.kubebus.dev',
  version: 'v1',
  kind: 'Claim',
  scope: 'Cluster',
  spec: z.object({}),
  status: z.object({}).partial(),
});

const MAX_ATTEMPTS = 3;
const BLOCKER = 'test.kubebus.dev/block';

const tenants = defineOperator({
  name: 'tenants',
  for: Tenant,
  owns: [kinds.Namespace, kinds.ConfigMap],
  partitions: 1,
  maxAttempts: MAX_ATTEMPTS,
  async reconcile(tenant, ctx) {
    const namespace = `tenant-${tenant.metadata.name}`;
    await ctx.apply(kinds.Namespace, { metadata: { name: namespace } });
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: 'limits', namespace },
      data: { cpu: '2' },
    });
    return { status: { namespace } };
  },
});

const KEY = { group: Tenant.group, resource: Tenant.plural, namespace: '', name: 'acme' };

describe('a namespace being deleted', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    // the namespace controller empties and removes a deleted Namespace
    env = await startTestEnvironment({ controllerManager: true });
    await env.install(Tenant);
    await env.run(tenants, { env: { KUBEBUS_BACKOFF_BASE: '50ms', KUBEBUS_BACKOFF_CAP: '500ms' } });
  });
  after(() => env?.stop());

  /** The reconciles of the Tenant that failed, and its dead letters, as the bus has them. */
  const recorded = async () => {
    const { outcomes, deadLetters } = await busRecordOf(env.natsEnv, KEY);
    return {
      errors: outcomes.filter((outcome) => /being terminated/.test(outcome.error ?? '')).length,
      deadLetters: deadLetters.length,
    };
  };

  it('is waited out past the attempt budget, and the namespace made again once it is gone', async () => {
    await env.apply({
      apiVersion: 'tenancy.test.kubebus.dev/v1',
      kind: 'Tenant',
      metadata: { name: 'acme' },
      spec: {},
    });
    await env.waitForCondition(Tenant, 'acme', { type: 'Ready' });
    // something of someone else's holds the namespace terminating
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'blocker', namespace: 'tenant-acme', finalizers: [BLOCKER] },
      data: {},
    });
    await env.delete(kinds.Namespace, 'tenant-acme');
    // the namespace controller deletes the Tenant's ConfigMap: each repair is refused
    let seen = { errors: 0, deadLetters: 0 };
    await waitFor(
      async () => {
        seen = await recorded();
        return seen.errors > MAX_ATTEMPTS + 1;
      },
      `more than ${String(MAX_ATTEMPTS + 1)} refused repairs of tenant-acme while it terminates`,
      120_000,
    );
    assert.equal(seen.deadLetters, 0, 'a namespace being deleted was dead-lettered');
    const tenant = await env.get(Tenant, 'acme');
    assert.ok(
      !(tenant?.status?.conditions ?? []).some(
        (condition) => condition.type === 'Degraded' && condition.status === 'True',
      ),
      JSON.stringify(tenant?.status?.conditions),
    );

    // let it go: once the namespace is gone, the retried reconcile makes it again
    const blocker = await env.get(kinds.ConfigMap, 'blocker', 'tenant-acme');
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'blocker', namespace: 'tenant-acme', finalizers: [] },
      data: blocker?.data ?? {},
    });
    await env.waitFor(
      kinds.ConfigMap,
      'limits',
      (limits) => limits?.data?.['cpu'] === '2' && limits.metadata.deletionTimestamp === undefined,
      { namespace: 'tenant-acme', timeoutMs: 120_000 },
    );
    const namespace = await env.get(kinds.Namespace, 'tenant-acme');
    assert.equal(namespace?.metadata.deletionTimestamp, undefined);
    assert.equal((await recorded()).deadLetters, 0);
  });

  it('garbage-collects what an object of a kind installed later owned, once it is deleted', async () => {
    // kube-controller-manager's collector finds new kinds every 30 s: the kit's install tells it
    await env.install(Claim);
    const claim = await env.apply({
      apiVersion: 'tenancy.test.kubebus.dev/v1',
      kind: 'Claim',
      metadata: { name: 'c1' },
      spec: {},
    });
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'owned-by-claim',
        namespace: 'default',
        ownerReferences: [
          {
            apiVersion: 'tenancy.test.kubebus.dev/v1',
            kind: 'Claim',
            name: 'c1',
            uid: claim.metadata.uid,
          },
        ],
      },
      data: {},
    });
    await env.delete(Claim, 'c1');
    // well within the collector's own 30 s discovery: it was not left to find the kind
    await env.waitFor(kinds.ConfigMap, 'owned-by-claim', (cm) => cm === undefined, {
      namespace: 'default',
      timeoutMs: 20_000,
    });
  });
});
