// Requests the operator's own RBAC refuses, on an apiserver with RBAC on,
// each role running as its own ServiceAccount under the RBAC `kubebus
// generate` writes. Retried past the attempt budget without a dead letter or
// parking, shown on the object as Ready=False, reason Forbidden, saying what
// to apply; once the admin applies it, the objects become Ready by
// themselves, with no re-drive.
// - A new version started before its RBAC was applied: v2 of the Workspace
//   operator adds LimitRange to `owns`; its reconciler still has v1's role.
// - An operator owning RoleBindings that forgot `rbac.bind`: the apiserver's
//   escalation refusal lists every rule not held; the object shows the count
//   and the `bind` to declare for the role its binding grants.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { readDeadLettersOf } from '@kubebus/cli/commands';
import { readOutcomes } from '@kubebus/shared/bus';
import type { CustomResource, Operator, OperatorRbac } from '@kubebus/shared/definition';
import { KubeClient, MANAGED_BY, MANAGED_BY_LABEL, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';
import { TestBed } from '../bed/testbed.js';
import { crdOf } from '../../packages/kubebus/src/api/crd.js';
import { rbacOf } from '../../packages/kubebus/src/generate/rbac.js';
import type { Role } from '../../packages/kubebus/src/host/role-configs.js';
import { runRolesUnderAccounts, type RunningRole } from '../support/roles-under-accounts.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'kubebus';
const GROUP = 'forbidden.test.kubebus.dev';
const RBAC_API = '/apis/rbac.authorization.k8s.io/v1';
const MAX_ATTEMPTS = 2;
/** Refusals each object is seen through: well past its budget (KUBEBUS_OBJECT_ATTEMPTS, 3, too) */
const REFUSALS = 2 * MAX_ATTEMPTS + 2;

const Workspace = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'Workspace',
  scope: 'Namespaced',
  spec: z.object({ cpu: z.string().default('2') }),
  status: z.object({ limits: z.string() }).partial(),
});

const workspaces = (owns: NonNullable<Operator['owns']>) =>
  defineOperator({
    name: 'workspaces',
    for: Workspace,
    owns,
    partitions: 1,
    maxAttempts: MAX_ATTEMPTS,
    async reconcile(workspace, ctx) {
      const { name } = workspace.metadata;
      await ctx.apply(kinds.ConfigMap, { metadata: { name }, data: { cpu: workspace.spec.cpu } });
      // new in v2
      await ctx.apply(kinds.LimitRange, {
        metadata: { name: `${name}-defaults` },
        spec: { limits: [{ type: 'Container', max: { cpu: workspace.spec.cpu } }] },
      });
      return { status: { limits: `${name}-defaults` } };
    },
  });

const Team = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'Team',
  scope: 'Namespaced',
  spec: z.object({ readers: z.array(z.string()).default(['alice']) }),
  status: z.object({}),
});

/** What a team's readers are granted: rules the reconciler does not hold. */
const READER_ROLE = 'team-reader';

const teams = (rbac?: OperatorRbac) =>
  defineOperator({
    name: 'teams',
    for: Team,
    owns: [kinds.RoleBinding],
    ...(rbac === undefined ? {} : { rbac }),
    partitions: 1,
    maxAttempts: MAX_ATTEMPTS,
    async reconcile(team, ctx) {
      await ctx.apply(kinds.RoleBinding, {
        metadata: { name: `${team.metadata.name}-readers` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READER_ROLE },
        subjects: team.spec.readers.map((user) => ({
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'User',
          name: user,
        })),
      });
      return undefined;
    },
  });

type Conditions = { type: string; status: string; reason?: string; message?: string }[];

describe("the operator's own RBAC refusing", { timeout: 120_000 }, () => {
  let bed: TestBed;
  let admin: KubeClient;
  const running: RunningRole[] = [];

  /** `kubectl apply --server-side` as the admin. */
  async function apply(object: Record<string, unknown>): Promise<void> {
    const { kind, metadata } = object as {
      kind: string;
      metadata: { name: string; namespace?: string };
    };
    const admission = '/apis/admissionregistration.k8s.io/v1';
    const path: Record<string, string> = {
      CustomResourceDefinition: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      ServiceAccount: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
      ClusterRole: `${RBAC_API}/clusterroles`,
      ClusterRoleBinding: `${RBAC_API}/clusterrolebindings`,
      ValidatingAdmissionPolicy: `${admission}/validatingadmissionpolicies`,
      ValidatingAdmissionPolicyBinding: `${admission}/validatingadmissionpolicybindings`,
      Namespace: '/api/v1/namespaces',
      Workspace: `/apis/${GROUP}/v1/namespaces/${metadata.namespace ?? ''}/workspaces`,
      Team: `/apis/${GROUP}/v1/namespaces/${metadata.namespace ?? ''}/teams`,
    };
    const collection = path[kind];
    assert.ok(collection, `unexpected kind ${kind}`);
    await admin.request(`${collection}/${metadata.name}`, {
      method: 'PATCH',
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'admin', force: true },
      body: object,
    });
  }

  const rbac = (operator: Operator, roles: Role[]) =>
    rbacOf(operator, NAMESPACE, roles) as Record<string, unknown>[];

  /** Its CRD and the RBAC `kubebus generate` writes for each role, then each role running. */
  async function install(resource: CustomResource, rbacOfRoles: Record<string, unknown>[]) {
    await apply(crdOf(resource));
    for (const object of rbacOfRoles) await apply(object);
    await waitFor(async () => {
      const served = await admin.request<{ resources: { name: string }[] }>(`/apis/${GROUP}/v1`);
      return served.resources.some((served) => served.name === resource.plural);
    }, `the ${resource.kind} CRD to be served`);
  }

  async function create(resource: CustomResource, namespace: string, names: readonly string[]) {
    for (const name of names)
      await apply({
        apiVersion: `${GROUP}/v1`,
        kind: resource.kind,
        metadata: { name, namespace },
        spec: {},
      });
  }

  const conditionsOf = async (resource: CustomResource, namespace: string, name: string) =>
    (
      await admin.request<{ status?: { conditions?: Conditions } }>(
        `/apis/${GROUP}/v1/namespaces/${namespace}/${resource.plural}/${name}`,
      )
    ).status?.conditions ?? [];

  /** The refused reconciles (their error matching) and the dead letters of each object, as the bus has them. */
  async function recorded(
    resource: CustomResource,
    namespace: string,
    names: readonly string[],
    refused: RegExp,
  ): Promise<{ refusals: number[]; deadLetters: number }> {
    const nc = await connect({ servers: bed.natsUrl });
    try {
      const keys = names.map((name) => ({
        group: GROUP,
        resource: resource.plural,
        namespace,
        name,
      }));
      const refusals = await Promise.all(
        keys.map(async (key) =>
          (await readOutcomes(nc, key)).filter((outcome) => refused.test(outcome.error ?? '')),
        ),
      );
      const letters = await Promise.all(keys.map((key) => readDeadLettersOf(nc, key)));
      return {
        refusals: refusals.map((list) => list.length),
        deadLetters: letters.flat().length,
      };
    } finally {
      await nc.close();
    }
  }

  /** Refused well past the budget, never dead-lettered nor parked; Ready=False, reason Forbidden, with a Warning Event. */
  async function waitedOut(
    resource: CustomResource,
    namespace: string,
    names: readonly string[],
    refused: RegExp,
  ): Promise<string[]> {
    // well past the budget, or dead-lettered: no use waiting longer then
    let seen = { refusals: [0], deadLetters: 0 };
    await waitFor(
      async () => {
        seen = await recorded(resource, namespace, names, refused);
        return seen.deadLetters > 0 || seen.refusals.every((count) => count >= REFUSALS);
      },
      `${String(REFUSALS)} refused reconciles of each ${resource.kind}`,
      60_000,
    );
    assert.equal(seen.deadLetters, 0, 'an RBAC refusal was dead-lettered');
    const messages: string[] = [];
    for (const name of names) {
      let conditions: Conditions = [];
      // the status writer shows it a moment after the refusal
      await waitFor(async () => {
        conditions = await conditionsOf(resource, namespace, name);
        return conditions.some((c) => c.type === 'Ready' && c.reason === 'Forbidden');
      }, `${resource.kind} ${name} to show Ready=False, reason Forbidden`);
      const ready = conditions.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'False');
      assert.ok(
        !conditions.some((c) => c.type === 'Degraded' && c.status === 'True'),
        `${resource.kind} ${name} was parked: ${JSON.stringify(conditions)}`,
      );
      // and one Warning Event saying the same (sent in the background)
      await waitFor(async () => {
        const events = await admin.request<{
          items: { type: string; reason: string; regarding: { name: string }; note: string }[];
        }>(`/apis/events.k8s.io/v1/namespaces/${namespace}/events`);
        return events.items.some(
          (event) =>
            event.type === 'Warning' &&
            event.reason === 'Forbidden' &&
            event.regarding.name === name &&
            event.note === ready?.message,
        );
      }, `a Forbidden Warning Event about ${resource.kind} ${name}`);
      messages.push(ready?.message ?? '');
    }
    return messages;
  }

  /** Each object Ready, once the RBAC is applied: no re-drive, nothing else done. */
  async function recovered(resource: CustomResource, namespace: string, names: readonly string[]) {
    for (const name of names)
      await waitFor(
        async () =>
          (await conditionsOf(resource, namespace, name)).some(
            (c) => c.type === 'Ready' && c.status === 'True',
          ),
        `${resource.kind} ${name} to become Ready once the RBAC is applied`,
        30_000,
      );
  }

  before(async () => {
    bed = await TestBed.start();
    admin = new KubeClient(
      await loadKubeConfig(bed.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
    await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  });

  after(async () => {
    for (const role of running.reverse()) await role.stop();
    await bed?.stop();
  });

  it('waits for a kind a new version owns until its RBAC is applied, then reconciles it', async () => {
    const v1 = workspaces([kinds.ConfigMap]);
    const v2 = workspaces([kinds.ConfigMap, kinds.LimitRange]);
    const tenants = 'team-a';
    const names = ['alpha', 'beta'];
    await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: tenants } });
    // v2's watcher and status writer; its reconciler still under v1's role
    await install(Workspace, [
      ...rbac(v2, ['watcher', 'status-writer']),
      ...rbac(v1, ['reconciler']),
    ]);
    running.push(...(await runRolesUnderAccounts(bed, v2, NAMESPACE)));
    await create(Workspace, tenants, names);
    const messages = await waitedOut(
      Workspace,
      tenants,
      names,
      /does not let it patch limitranges/,
    );
    for (const message of messages)
      assert.match(
        message,
        /^the operator's RBAC does not let it patch limitranges in the namespace "team-a": apply the RBAC `kubebus generate` writes/,
      );

    for (const object of rbac(v2, ['reconciler'])) await apply(object);
    await recovered(Workspace, tenants, names);
    const limits = await admin.request<{ spec: { limits: { max: { cpu: string } }[] } }>(
      `/api/v1/namespaces/${tenants}/limitranges/alpha-defaults`,
    );
    assert.equal(limits.spec.limits[0]?.max.cpu, '2');
    assert.equal((await recorded(Workspace, tenants, names, /./)).deadLetters, 0);
  });

  it('says which role to declare in rbac.bind, without the rules it lists, and reconciles once it is applied', async () => {
    // a role whose rules (three, one line each in the refusal) the reconciler does not hold
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: READER_ROLE },
      rules: [
        { apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'list'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] },
      ],
    });
    // the namespace is the operator's own (labelled as it labels what it makes): the
    // admission policy that ships with `bind` lets it grant there
    const own = 'team-b';
    await apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: own,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY, 'kubebus.dev/controller': 'teams' },
      },
    });
    const names = ['gamma'];
    await install(Team, rbac(teams(), ['watcher', 'reconciler', 'status-writer']));
    running.push(...(await runRolesUnderAccounts(bed, teams(), NAMESPACE)));
    await create(Team, own, names);
    const [message = ''] = await waitedOut(Team, own, names, /not currently held/);
    assert.match(
      message,
      /^the operator may not grant ClusterRole team-reader, whose rules it does not hold \(3 missing\); if it is meant to, declare `rbac: \{ bind: \[\{ kind: 'ClusterRole', name: 'team-reader' \}\] \}`, then apply the RBAC `kubebus generate` writes/,
    );
    assert.match(
      message,
      /is attempting to grant RBAC permissions not currently held \(3 rules not held\)$/,
    );
    assert.doesNotMatch(message, /\n|APIGroups/);

    // the operator declares it; the admin applies what `kubebus generate` writes for that
    const declared = teams({ bind: [{ kind: 'ClusterRole', name: READER_ROLE }] });
    for (const object of rbac(declared, ['reconciler'])) await apply(object);
    await recovered(Team, own, names);
    const binding = await admin.request<{ roleRef: { name: string } }>(
      `${RBAC_API}/namespaces/${own}/rolebindings/gamma-readers`,
    );
    assert.equal(binding.roleRef.name, READER_ROLE);
  });
});
