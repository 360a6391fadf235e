// RBAC for an operator that grants a role: a cluster-scoped Tenant owning a
// Namespace and a RoleBinding to the bootstrap ClusterRole `admin`, on a test
// bed whose kube-controller-manager aggregates admin's rules (as a real
// cluster does). The RBAC is what `kubebus generate` writes, applied as is;
// each role runs with a token of its own service account. It shows that
// without the declared `bind` the apiserver refuses the binding, that with it
// the Tenant reconciles, that the reconciler can grant nothing else, and that
// the generated admission policy keeps it from granting admin to itself or
// outside the namespaces kubebus manages; and that an operator writing a
// ClusterRole with rules it does not hold (escalate) cannot label it into an
// aggregating role such as view. Each test makes the namespaces it uses.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  KubeClient,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  isKubeApiError,
  loadKubeConfig,
} from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import type { Operator } from '@kubebus/shared/definition';
import { httpCall } from '../bed/http.js';
import { TestBed } from '../bed/testbed.js';
import type { Role } from '../../packages/kubebus/src/host/role-configs.js';
import tenantAdmins, { GRANTED_ROLE } from '../support/operators/tenant-admins.js';
import clusterWide from '../support/operators/tenant-admins-cluster-wide.js';
import tenantReaders, { READER_ROLE } from '../support/operators/tenant-readers.js';
import { runRolesUnderAccounts } from '../support/roles-under-accounts.js';
import { generatedManifests } from '../support/generated-manifests.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'kubebus';
const RBAC_API = '/apis/rbac.authorization.k8s.io/v1';
const NOT_HELD = /attempting to grant RBAC permissions not currently held/;
const fenceOf = (operator: string, check: string) => `kubebus-${operator}-reconciler-${check}`;
const FENCES = [
  ...['subjects', 'cluster-wide', 'namespaces', 'own-namespaces'].map((check) =>
    fenceOf(tenantAdmins.name, check),
  ),
  fenceOf(tenantReaders.name, 'aggregation'),
];
const fenced = (fence: string) =>
  new RegExp(`ValidatingAdmissionPolicy '${fence}' .*denied request`);
const BY_SUBJECT = fenced(fenceOf(tenantAdmins.name, 'subjects'));
const BY_NAMESPACE = fenced(fenceOf(tenantAdmins.name, 'namespaces'));
// it owns Namespaces: changing one it did not make is refused, labelling it its own too
const BY_LABEL = fenced(fenceOf(tenantAdmins.name, 'own-namespaces'));
const BY_CLUSTER_WIDE = fenced(fenceOf(clusterWide.name, 'cluster-wide'));
const BY_AGGREGATION = fenced(fenceOf(tenantReaders.name, 'aggregation'));
/** The labels the reconciler puts on what it applies: what its fence calls its own. */
const MADE_BY_IT = { [MANAGED_BY_LABEL]: MANAGED_BY, 'kubebus.dev/controller': tenantAdmins.name };
const RECONCILER = `kubebus-${tenantAdmins.name}-reconciler`;
const operatorFile = (name: string) =>
  fileURLToPath(new URL(`../support/operators/${name}.ts`, import.meta.url));

/** `kubebus generate <operator> --only <parts>`: the manifests a user would apply. */
const generated = (operator: string, parts: string) =>
  generatedManifests(operatorFile(operator), parts, NAMESPACE);

const collections: Record<string, (namespace: string) => string> = {
  CustomResourceDefinition: () => '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
  ClusterRole: () => `${RBAC_API}/clusterroles`,
  ClusterRoleBinding: () => `${RBAC_API}/clusterrolebindings`,
  ValidatingAdmissionPolicy: () =>
    '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: () =>
    '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
};

type Subject = { kind: 'User' | 'Group' | 'ServiceAccount'; name: string; namespace?: string };
const alice: Subject = { kind: 'User', name: 'alice' };

/** A ClusterRoleBinding to `roleName` for alice, as server-side apply sends it. */
function clusterBindingTo(roleName: string, name = `grant-${roleName}-cluster-wide`) {
  return {
    path: `${RBAC_API}/clusterrolebindings/${name}`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...alice }],
    },
  };
}

/** A rolebinding to `roleName` for `subject` (alice), as server-side apply sends it. */
function bindingTo(
  roleName: string,
  namespace: string,
  subject: Subject = alice,
  name = `grant-${roleName}`,
) {
  return {
    path: `${RBAC_API}/namespaces/${namespace}/rolebindings/${name}`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [
        subject.kind === 'ServiceAccount'
          ? subject
          : { apiGroup: 'rbac.authorization.k8s.io', ...subject },
      ],
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

  const apply = (client: KubeClient, binding: { path: string; body: object }) =>
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

  /** A namespace made by the admin, with labels (MADE_BY_IT: as the reconciler labels its own). */
  async function namespaceOf(name: string, labels: Record<string, string> = {}): Promise<string> {
    await admin.request('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } },
    });
    return name;
  }

  /** The reconciler's server-side apply of its own labels on a Namespace. */
  const labelAsManaged = (client: KubeClient, namespace: string) =>
    client.request(`/api/v1/namespaces/${namespace}`, {
      method: 'PATCH',
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'rbac-bind-test', force: true },
      body: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: MADE_BY_IT },
      },
    });

  const unlabel = (namespace: string) =>
    admin.request(`/api/v1/namespaces/${namespace}`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: {
        metadata: {
          labels: Object.fromEntries(Object.keys(MADE_BY_IT).map((label) => [label, null])),
        },
      },
    });

  /** Every role of the operator in this process, each with its own account's token. */
  async function runRoles(operator: Operator): Promise<void> {
    running.push(...(await runRolesUnderAccounts(bed, operator, NAMESPACE)));
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
    const [bound, unbound, wide, readers, started] = await Promise.all([
      generated('tenant-admins', 'crd,rbac'),
      generated('tenant-admins-unbound', 'rbac'),
      generated('tenant-admins-cluster-wide', 'rbac'),
      generated('tenant-readers', 'rbac'),
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
    for (const object of [...bound, ...unbound, ...wide, ...readers]) await create(object);
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
    // the apiserver loads admission policies from a watch: wait until it enforces each
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    const inside = await namespaceOf('fence-probe', MADE_BY_IT);
    const outside = await namespaceOf('fence-probe-outside');
    const everyone: Subject = { kind: 'Group', name: 'system:authenticated' };
    const probes: [RegExp, () => Promise<unknown>][] = [
      [BY_SUBJECT, () => apply(reconciler, bindingTo(GRANTED_ROLE, inside, everyone))],
      [BY_NAMESPACE, () => apply(reconciler, bindingTo(GRANTED_ROLE, outside))],
      [BY_LABEL, () => labelAsManaged(reconciler, outside)],
    ];
    for (const [fence, probe] of probes)
      await waitFor(
        async () => {
          const refused = await refusal(probe());
          // a label put before the policy was loaded would open the fence: take it off again
          if (refused === undefined && fence === BY_LABEL) await unlabel(outside);
          return fence.test(refused ?? '');
        },
        `the admission policy ${String(fence)} to be enforced`,
        60_000,
      );
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
    // (the authorizer learns a binding from its watch, a moment after the write)
    await waitFor(
      () => subjectMay('alice', { ...deployments, namespace: 'tenant-acme' }),
      'alice to create deployments in tenant-acme',
    );
    assert.equal(await subjectMay('alice', { ...deployments, namespace: 'default' }), false);
  });

  it('lets the reconciler grant nothing but the declared role', async () => {
    const tenant = await namespaceOf('tenant-others', MADE_BY_IT);
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    for (const other of ['cluster-admin', 'edit'])
      assert.match(
        (await refusal(apply(reconciler, bindingTo(other, tenant)))) ??
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
        await reconcilerMay({ verb, resource, namespace: tenant }),
        false,
        `the reconciler may ${verb} ${resource}`,
      );
    // and tried, it is refused: listing the Secrets of the tenant's namespace
    const secrets = await refusal(reconciler.request(`/api/v1/namespaces/${tenant}/secrets`));
    assert.ok(secrets !== undefined, 'the reconciler listed Secrets');
  });

  it('type-checks the admission policies that fence the reconciler', async () => {
    for (const fence of FENCES) {
      let policy: {
        metadata: { generation: number };
        status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } };
      } = { metadata: { generation: 0 } };
      await waitFor(async () => {
        policy = await admin.request(
          `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${fence}`,
        );
        return policy.status?.observedGeneration === policy.metadata.generation;
      }, `the apiserver to type-check ${fence}`);
      assert.deepEqual(policy.status?.typeChecking?.expressionWarnings ?? [], [], fence);
    }
  });

  it('refuses a binding of admin to the reconciler itself, here or in kube-system', async () => {
    const tenant = await namespaceOf('tenant-self', MADE_BY_IT);
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    const itself: Subject = { kind: 'ServiceAccount', name: RECONCILER, namespace: NAMESPACE };
    // in its own namespace the account needs no namespace in the subject: it is the binding's
    const itselfHere: Subject = { kind: 'ServiceAccount', name: RECONCILER };
    // its namespace and kube-system are fenced by namespace too: either refusal will do there
    const either = new RegExp(`${BY_SUBJECT.source}|${BY_NAMESPACE.source}`);
    const attempts = [
      {
        where: 'a tenant namespace',
        fence: BY_SUBJECT,
        binding: bindingTo(GRANTED_ROLE, tenant, itself),
      },
      {
        where: 'its namespace',
        fence: either,
        binding: bindingTo(GRANTED_ROLE, NAMESPACE, itselfHere),
      },
      {
        where: 'kube-system',
        fence: either,
        binding: bindingTo(GRANTED_ROLE, 'kube-system', itself),
      },
      {
        where: 'a tenant namespace, as its group',
        fence: BY_SUBJECT,
        binding: bindingTo(GRANTED_ROLE, tenant, {
          kind: 'Group',
          name: `system:serviceaccounts:${NAMESPACE}`,
        }),
      },
    ];
    for (const { where, fence, binding } of attempts)
      assert.match(
        (await refusal(apply(reconciler, binding))) ?? `admin for itself in ${where} was allowed`,
        fence,
        where,
      );
    // nothing was written: the reconciler still may not create pods in kube-system
    assert.equal(
      await reconcilerMay({ verb: 'create', resource: 'pods', namespace: 'kube-system' }),
      false,
    );
  });

  it('refuses bindings outside the namespaces kubebus manages', async () => {
    const unmanaged = await namespaceOf('not-a-tenant');
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    for (const namespace of [unmanaged, 'kube-system', 'kube-public', NAMESPACE])
      assert.match(
        (await refusal(apply(reconciler, bindingTo(GRANTED_ROLE, namespace)))) ??
          `admin for alice in ${namespace} was allowed`,
        BY_NAMESPACE,
        namespace,
      );
    // nor may it move a namespace inside the fence by labelling it as its own
    const labelled = await refusal(labelAsManaged(reconciler, unmanaged));
    assert.match(labelled ?? `labelling ${unmanaged} was allowed`, BY_LABEL);
  });

  it('still grants admin to a tenant admin in a namespace kubebus manages', async () => {
    const tenant = await namespaceOf('tenant-granted', MADE_BY_IT);
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    assert.equal(await refusal(apply(reconciler, bindingTo(GRANTED_ROLE, tenant))), undefined);
    const deployments = { verb: 'create', group: 'apps', resource: 'deployments' };
    await waitFor(
      () => subjectMay('alice', { ...deployments, namespace: tenant }),
      `alice to create deployments in ${tenant}`,
    );
  });
  it('refuses bindings in namespaces other kubebus operators made, or only labelled managed-by', async () => {
    const others = await namespaceOf('made-by-another', {
      [MANAGED_BY_LABEL]: MANAGED_BY,
      'kubebus.dev/controller': 'another-operator',
    });
    const managedOnly = await namespaceOf('managed-by-only', { [MANAGED_BY_LABEL]: MANAGED_BY });
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    for (const namespace of [others, managedOnly])
      assert.match(
        (await refusal(apply(reconciler, bindingTo(GRANTED_ROLE, namespace)))) ??
          `admin for alice in ${namespace} was allowed`,
        BY_NAMESPACE,
        namespace,
      );
    // nor may it claim them by putting its own labels on them
    for (const namespace of [others, managedOnly])
      assert.match(
        (await refusal(labelAsManaged(reconciler, namespace))) ??
          `labelling ${namespace} as the reconciler's own was allowed`,
        BY_LABEL,
        namespace,
      );
    const deployments = { verb: 'create', group: 'apps', resource: 'deployments' };
    for (const namespace of [others, managedOnly])
      assert.equal(await subjectMay('alice', { ...deployments, namespace }), false, namespace);
  });

  it('refuses granting a role it binds without holding cluster-wide, not one it holds', async () => {
    const reconciler = await accountClient(clusterWide.name, 'reconciler');
    const grant = clusterBindingTo(GRANTED_ROLE);
    // RBAC allows it (it owns ClusterRoleBindings and may bind admin): only the fence refuses.
    // The apiserver loads the policy from a watch: until it does, take the grant back.
    let refused: string | undefined;
    await waitFor(
      async () => {
        refused = await refusal(apply(reconciler, grant));
        if (refused === undefined) await admin.request(grant.path, { method: 'DELETE' });
        return refused !== undefined;
      },
      'the cluster-wide grant of admin to be refused',
      60_000,
    );
    assert.match(refused ?? '', BY_CLUSTER_WIDE);
    const deployments = { verb: 'create', group: 'apps', resource: 'deployments' };
    for (const namespace of ['default', 'kube-system'])
      assert.equal(await subjectMay('alice', { ...deployments, namespace }), false, namespace);
    // a ClusterRole whose rules it holds, it still grants cluster-wide
    await admin.request(`${RBAC_API}/clusterroles`, {
      method: 'POST',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'tenant-viewer' },
        rules: [
          { apiGroups: ['tenancy.test.kubebus.dev'], resources: ['tenants'], verbs: ['get'] },
        ],
      },
    });
    assert.equal(await refusal(apply(reconciler, clusterBindingTo('tenant-viewer'))), undefined);
    const tenants = { verb: 'get', group: 'tenancy.test.kubebus.dev', resource: 'tenants' };
    // the authorizer learns a new binding from its watch: a moment after the write
    await waitFor(() => subjectMay('alice', tenants), 'alice to get tenants through the binding');
  });

  it('refuses a ClusterRole it writes labelled into view, and still writes it unlabelled', async () => {
    const reconciler = await accountClient(tenantReaders.name, 'reconciler');
    // escalate: any rule, here one the reconciler does not hold (reading Secrets)
    const readerRole = (labels: Record<string, string>) => ({
      path: `${RBAC_API}/clusterroles/${READER_ROLE}`,
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: READER_ROLE, labels },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }],
      },
    });
    const intoView = readerRole({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    // RBAC allows it (escalate on the name): only the fence refuses. The apiserver
    // loads the policy from a watch: until it does, take the role back.
    let refused: string | undefined;
    await waitFor(
      async () => {
        refused = await refusal(apply(reconciler, intoView));
        if (refused === undefined) await admin.request(intoView.path, { method: 'DELETE' });
        return refused !== undefined;
      },
      'the ClusterRole labelled into view to be refused',
      60_000,
    );
    assert.match(refused ?? '', BY_AGGREGATION);
    // any label an aggregating role could select by, not only the bootstrap roles'
    const custom = readerRole({ 'example.com/aggregate-to-monitoring': 'true' });
    assert.match((await refusal(apply(reconciler, custom))) ?? 'allowed', BY_AGGREGATION);
    // the same role with kubebus' own labels is written, its rules as given
    const own = readerRole(MADE_BY_IT);
    assert.equal(await refusal(apply(reconciler, own)), undefined);
    const written = await admin.request<{ rules: { resources: string[] }[] }>(own.path);
    assert.deepEqual(written.rules[0]?.resources, ['secrets']);
    // nothing reached view: a holder of view still may not read Secrets
    const secrets = { verb: 'get', resource: 'secrets', namespace: 'default' };
    await admin.request(`${RBAC_API}/clusterrolebindings`, {
      method: 'POST',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'bob-views' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
      },
    });
    const configMaps = { verb: 'get', resource: 'configmaps', namespace: 'default' };
    await waitFor(() => subjectMay('bob', configMaps), 'bob to read ConfigMaps through view');
    // (a labelled role written before the policy was loaded was deleted again:
    // the aggregation controller takes its rules back out of view a moment later)
    await waitFor(async () => {
      const view = await admin.request<{ rules?: { resources?: string[] }[] }>(
        `${RBAC_API}/clusterroles/view`,
      );
      return !(view.rules ?? []).some((rule) => rule.resources?.includes('secrets'));
    }, 'view to hold no rule on Secrets');
    assert.equal(await subjectMay('bob', secrets), false);
  });

  it('refuses changing or deleting a Namespace it did not make, and deletes one it made', async () => {
    const reconciler = await accountClient(tenantAdmins.name, 'reconciler');
    const foreign = await namespaceOf('someone-elses');
    const mine = await namespaceOf('tenant-deletable', MADE_BY_IT);
    // RBAC lets it (it owns Namespaces): only the fence refuses
    const nsPath = (name: string) => `/api/v1/namespaces/${name}`;
    // (kube-system the apiserver never deletes; its labels are the fence's to keep)
    for (const name of [foreign, NAMESPACE])
      assert.match(
        (await refusal(reconciler.request(nsPath(name), { method: 'DELETE' }))) ??
          `deleting ${name} was allowed`,
        BY_LABEL,
        name,
      );
    // nor lower kube-system's Pod Security by a label
    const relabel = reconciler.request(nsPath('kube-system'), {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } },
    });
    assert.match((await refusal(relabel)) ?? 'relabelling kube-system was allowed', BY_LABEL);
    for (const name of [foreign, NAMESPACE, 'kube-system'])
      assert.ok(await admin.request(nsPath(name)), `${name} is gone`);
    // what it made is its own to delete
    assert.equal(await refusal(reconciler.request(nsPath(mine), { method: 'DELETE' })), undefined);
  });
});
