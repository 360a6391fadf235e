// RBAC for an operator that grants a role: a cluster-scoped Tenant owning a
// Namespace and a RoleBinding to the bootstrap ClusterRole `admin`, on a test
// bed whose kube-controller-manager aggregates admin's rules (as a real
// cluster does). The RBAC is what `kubebus generate` writes, applied as is;
// each role runs with a token of its own service account. It shows that
// without the declared `bind` the apiserver refuses the binding, that with it
// the Tenant reconciles, and that the reconciler can grant nothing else.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { KubeClient, isKubeApiError, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics, startServiceShell } from '@kubebus/shared/obs';
import type { Operator } from '@kubebus/shared/definition';
import { httpCall } from '../bed/http.js';
import { TestBed } from '../bed/testbed.js';
import { roleConfigsOf, runOperator } from '../../packages/kubebus/src/host/run-operator.js';
import { ROLES, type Role } from '../../packages/kubebus/src/host/role-configs.js';
import { VERSION } from '../../packages/kubebus/src/cli/version.js';
import tenantAdmins, { GRANTED_ROLE } from '../support/operators/tenant-admins.js';
import { kubebusArgs } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'kubebus';
const RBAC_API = '/apis/rbac.authorization.k8s.io/v1';
const NOT_HELD = /attempting to grant RBAC permissions not currently held/;
const operatorFile = (name: string) =>
  fileURLToPath(new URL(`../support/operators/${name}.ts`, import.meta.url));

/** `kubebus generate <operator> --only <parts>`: the manifests a user would apply. */
async function generated(operator: string, parts: string): Promise<Record<string, unknown>[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    kubebusArgs('generate', operatorFile(operator), '--only', parts, '--namespace', NAMESPACE),
    { maxBuffer: 8 << 20 },
  );
  return parseAllDocuments(stdout).map((d) => d.toJSON() as Record<string, unknown>);
}

const collections: Record<string, (namespace: string) => string> = {
  CustomResourceDefinition: () => '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
  ClusterRole: () => `${RBAC_API}/clusterroles`,
  ClusterRoleBinding: () => `${RBAC_API}/clusterrolebindings`,
};

/** A rolebinding to `roleName` for user alice, as server-side apply sends it. */
function bindingTo(roleName: string, namespace: string, name = `grant-${roleName}`) {
  return {
    path: `${RBAC_API}/namespaces/${namespace}/rolebindings/${name}`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    },
  };
}

describe('RBAC of an operator that binds a role', { timeout: 480_000 }, () => {
  let bed: TestBed;
  let admin: KubeClient;
  const running: { stop(): Promise<void> }[] = [];

  /** A client with a token of the operator's service account for one role. */
  const accountClient = async (operator: string, role: Role) =>
    new KubeClient(
      await loadKubeConfig(
        await bed.serviceAccountKubeconfig(NAMESPACE, `kubebus-${operator}-${role}`),
        {},
      ),
      restClientMetrics(new Registry()),
    );

  const apply = (client: KubeClient, binding: ReturnType<typeof bindingTo>) =>
    client.request(binding.path, {
      method: 'PATCH',
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'rbac-bind-test', force: true },
      body: binding.body,
    });

  /** The apiserver's refusal of a request, or undefined when it was allowed. */
  const refusal = (request: Promise<unknown>) =>
    request.then(
      () => undefined,
      (error: unknown) => {
        if (isKubeApiError(error, 403)) return error.message;
        throw error;
      },
    );

  async function create(object: Record<string, unknown>): Promise<void> {
    const kind = String(object['kind']);
    const meta = object['metadata'] as { namespace?: string };
    const collection = collections[kind];
    assert.ok(collection, `kubebus generate wrote an unexpected kind ${kind}`);
    await admin.request(collection(meta.namespace ?? ''), { method: 'POST', body: object });
  }

  /** Every role of the operator in this process, each with its own account's token. */
  async function runRoles(operator: Operator): Promise<void> {
    for (const role of ROLES) {
      const shell = await startServiceShell({
        service: `${operator.name}-${role}`,
        logLevel: 'warn',
        health: { host: '127.0.0.1', port: 0 },
      });
      const replicaId = `rbac-${role}`;
      const env = {
        KUBEBUS_NATS_URL: bed.natsUrl,
        KUBEBUS_HEALTH_PORT: '0',
        KUBEBUS_BACKOFF_BASE: '100ms',
        KUBEBUS_BACKOFF_CAP: '2s',
      };
      const handle = await runOperator({
        operator,
        roles: [role],
        configs: roleConfigsOf(operator, [role], env, replicaId),
        replicaId,
        kubeConfig: await loadKubeConfig(
          await bed.serviceAccountKubeconfig(NAMESPACE, `kubebus-${operator.name}-${role}`),
          {},
        ),
        shell,
        version: VERSION,
      });
      shell.started();
      running.push({
        async stop() {
          await handle.stop();
          await shell.health.close();
        },
      });
    }
  }

  /** Whether the reconciler's account may do this (a SubjectAccessReview as the admin). */
  async function reconcilerMay(attributes: Readonly<Record<string, string>>): Promise<boolean> {
    const account = `kubebus-${tenantAdmins.name}-reconciler`;
    return subjectMay(`system:serviceaccount:${NAMESPACE}:${account}`, attributes, [
      'system:serviceaccounts',
      `system:serviceaccounts:${NAMESPACE}`,
      'system:authenticated',
    ]);
  }

  async function subjectMay(
    user: string,
    attributes: Readonly<Record<string, string>>,
    groups: readonly string[] = ['system:authenticated'],
  ): Promise<boolean> {
    const review = await admin.request<{ status: { allowed: boolean } }>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        method: 'POST',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user, groups, resourceAttributes: attributes },
        },
      },
    );
    return review.status.allowed;
  }

  before(async () => {
    const [bound, unbound, started] = await Promise.all([
      generated('tenant-admins', 'crd,rbac'),
      generated('tenant-admins-unbound', 'rbac'),
      TestBed.start({ controllerManager: true }),
    ]);
    bed = started;
    admin = new KubeClient(
      await loadKubeConfig(bed.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
    await admin.request('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    });
    for (const object of [...bound, ...unbound]) await create(object);
    // the aggregation controller fills admin from the aggregate-to-admin roles
    await waitFor(async () => {
      const role = await admin.request<{ rules?: unknown[] }>(
        `${RBAC_API}/clusterroles/${GRANTED_ROLE}`,
      );
      return (role.rules?.length ?? 0) > 0;
    }, `the ClusterRole ${GRANTED_ROLE} to carry its aggregated rules`);
    await waitFor(async () => {
      const served = await httpCall(`${bed.apiserverUrl}/apis/tenancy.test.kubebus.dev/v1`, {
        tls: bed.adminTls,
      });
      return served.status === 200 && served.body.includes('"tenants"');
    }, 'the Tenant CRD to be served');
  });

  after(async () => {
    for (const role of running.reverse()) await role.stop();
    await bed?.stop();
  });

  it('refuses the binding when the operator does not declare bind', async () => {
    await admin.request('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-probe' } },
    });
    const reconciler = await accountClient('tenant-admins-unbound', 'reconciler');
    // it may write RoleBindings (it owns them), but not ones that grant admin's rules
    const refused = await refusal(apply(reconciler, bindingTo(GRANTED_ROLE, 'tenant-probe')));
    assert.match(refused ?? 'the binding was allowed', NOT_HELD);
  });

  it('reconciles the Tenant and its binding with the declared bind', async () => {
    await runRoles(tenantAdmins);
    await admin.request('/apis/tenancy.test.kubebus.dev/v1/tenants', {
      method: 'POST',
      body: {
        apiVersion: 'tenancy.test.kubebus.dev/v1',
        kind: 'Tenant',
        metadata: { name: 'acme' },
        spec: { admins: ['alice'] },
      },
    });
    let conditions: { type: string; status: string; message?: string }[] = [];
    const shows = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
    // Ready, or Degraded: the retries are spent (a Forbidden apply, say), no use waiting on
    await waitFor(
      async () => {
        const tenant = await admin.request<{ status?: { conditions?: typeof conditions } }>(
          '/apis/tenancy.test.kubebus.dev/v1/tenants/acme',
        );
        conditions = tenant.status?.conditions ?? [];
        return shows('Ready') || shows('Degraded');
      },
      'Tenant acme to be Ready or Degraded',
      120_000,
    );
    assert.ok(shows('Ready'), `Tenant acme is not Ready: ${JSON.stringify(conditions)}`);
    const binding = await admin.request<{
      roleRef: { name: string };
      subjects: { name: string }[];
    }>(`${RBAC_API}/namespaces/tenant-acme/rolebindings/tenant-admins`);
    assert.equal(binding.roleRef.name, GRANTED_ROLE);
    assert.deepEqual(
      binding.subjects.map((s) => s.name),
      ['alice'],
    );
    // the grant is real: alice administers her tenant's namespace, and nothing outside it
    const deployments = { verb: 'create', group: 'apps', resource: 'deployments' };
    assert.equal(await subjectMay('alice', { ...deployments, namespace: 'tenant-acme' }), true);
    assert.equal(await subjectMay('alice', { ...deployments, namespace: 'default' }), false);
  });

  it('lets the reconciler grant nothing but the declared role', async () => {
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    for (const other of ['cluster-admin', 'edit'])
      assert.match(
        (await refusal(apply(reconciler, bindingTo(other, 'tenant-acme')))) ??
          `a binding to ${other} was allowed`,
        NOT_HELD,
      );
    const rbac = { group: 'rbac.authorization.k8s.io' };
    assert.equal(
      await reconcilerMay({ ...rbac, verb: 'bind', resource: 'clusterroles', name: GRANTED_ROLE }),
      true,
    );
    assert.equal(
      await reconcilerMay({
        ...rbac,
        verb: 'bind',
        resource: 'clusterroles',
        name: 'cluster-admin',
      }),
      false,
    );
    assert.equal(
      await reconcilerMay({
        ...rbac,
        verb: 'escalate',
        resource: 'clusterroles',
        name: GRANTED_ROLE,
      }),
      false,
    );
    assert.equal(
      await reconcilerMay({ ...rbac, verb: 'create', resource: 'clusterrolebindings' }),
      false,
    );
    // bind is not holding: what admin grants, the reconciler itself may not do
    for (const [verb, resource] of [
      ['get', 'secrets'],
      ['create', 'pods'],
    ] as const)
      assert.equal(
        await reconcilerMay({ verb, resource, namespace: 'tenant-acme' }),
        false,
        `the reconciler may ${verb} ${resource}`,
      );
    // and tried, it is refused: listing the Secrets of the tenant's namespace
    const secrets = await refusal(reconciler.request('/api/v1/namespaces/tenant-acme/secrets'));
    assert.ok(secrets !== undefined, 'the reconciler listed Secrets');
  });
});
