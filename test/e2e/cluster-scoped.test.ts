// A cluster-scoped owner with namespaced children (a Tenant owning a
// Namespace and a ConfigMap in it), on the test kit's real servers: an edit or
// a deletion of the child reconciles the owner — the key has no namespace —
// and the child is repaired within seconds, not at the next resync. A
// namespace another Tenant controls, or one an admin made, is not taken; a
// revision whose namespace is gone since replays as it ran.
import { kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { kubebusCli } from '../support/kubebus-cli.js';
import tenants, { Tenant } from '../support/operators/cluster-tenants.js';
import { waitFor } from '../support/wait.js';

const OPERATOR_FILE = fileURLToPath(
  new URL('../support/operators/cluster-tenants.ts', import.meta.url),
);

describe('a cluster-scoped owner with namespaced children', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    // namespaces deleted for good (the namespace controller): a pruned one goes
    env = await startTestEnvironment({ controllerManager: true });
    await env.install(Tenant);
    // a refused name is looked at again every 3 s, not 30: the wait below is the same
    await env.run(tenants, { env: { KUBEBUS_CLAIM_RETRY: '3s' } });
  });
  after(() => env.stop());

  const tenant = (name: string, spec: { cpu?: string; namespace?: string }) =>
    env.apply({
      apiVersion: 'tenancy.test.kubebus.dev/v1',
      kind: 'Tenant',
      metadata: { name },
      spec,
    });
  const limits = async () => (await env.get(kinds.ConfigMap, 'limits', 'tenant-acme'))?.data;

  it('repairs an edited and a deleted child of a cluster-scoped owner', async () => {
    await tenant('acme', { cpu: '4' });
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
    const refused = { type: 'Ready', status: 'False', reason: 'AlreadyOwned' };
    // all Tenants apply with one field manager: without the check, beta's apply would have
    // replaced acme's controller reference with its own
    await tenant('beta', { namespace: 'tenant-acme' });
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
    await tenant('gamma', { namespace: 'legacy' });
    const adopted = await env.waitForCondition(Tenant, 'gamma', refused);
    assert.match(
      adopted.message ?? '',
      /^Namespace legacy exists and was not made by the operator tenants: not adopted/,
    );
    const legacy = await env.get(kinds.Namespace, 'legacy');
    assert.equal(legacy?.metadata.ownerReferences, undefined);
    assert.equal(legacy?.metadata.labels?.['kubebus.dev/controller'], undefined);
  });

  it('takes the name once its controller lets it go, looking again on its own', async () => {
    // nothing of beta changes: its refusal is looked at again (KUBEBUS_CLAIM_RETRY) until it succeeds
    await env.delete(Tenant, 'acme');
    await env.waitForCondition(Tenant, 'beta', { type: 'Ready' }, { timeoutMs: 240_000 });
    const taken = await env.get(kinds.Namespace, 'tenant-acme');
    assert.deepEqual(
      taken?.metadata.ownerReferences?.map((ref) => ref.name),
      ['beta'],
    );
  });

  it('replays a revision whose namespace is gone since: its writes in it are made in it', async () => {
    await tenant('moving', { namespace: 'moving-before' });
    await waitFor(
      async () => (await env.get(Tenant, 'moving'))?.status?.namespace === 'moving-before',
      'the first namespace',
    );
    await tenant('moving', { namespace: 'moving-after' });
    // the first namespace is pruned and gone: a dry run of the first revision's ConfigMap
    // in it met a 404 from the apiserver, and computed no status
    await waitFor(
      async () => (await env.get(kinds.Namespace, 'moving-before')) === undefined,
      'the first namespace to go',
      120_000,
    );
    const result = await kubebusCli(['replay', OPERATOR_FILE, 'moving'], {
      ...env.natsEnv,
      KUBECONFIG: env.kubeconfigPath,
    });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.doesNotMatch(result.stdout, /no status computed/);
    assert.match(result.stdout, /: status same as recorded$/m);
  });
});
