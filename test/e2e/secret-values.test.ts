// ctx.readSecret on a real apiserver with RBAC, each role under its own
// ServiceAccount's token and the RBAC `kubebus generate` writes: the
// reconciler reads the one Secret its declared rule names, a new password
// reaches the status through the watch, a Secret the rule does not name is
// refused on the object (Ready=False, a Warning Event) and by the apiserver
// itself, and no value ever reaches the bus.
import { partitionOf } from '@kubebus/shared/bus';
import { DEFAULT_PARTITIONS } from '@kubebus/shared/definition';
import { KubeClient, isKubeApiError, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TestBed } from '../bed/testbed.js';
import { applyAll, type Manifest } from '../integration/deploy-render.js';
import connections, {
  Connection,
  READABLE,
  fingerprintOf,
} from '../support/operators/connections.js';
import { kubebusCli } from '../support/kubebus-cli.js';
import { runRolesUnderAccounts, type RunningRole } from '../support/roles-under-accounts.js';
import { generatedManifests } from '../support/generated-manifests.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'kubebus';
/** Connections that name one Secret and share a work partition (marks of one change apart) */
const SHARING = ['orders', samePartitionAs('orders')];

function samePartitionAs(name: string): string {
  const partitions = connections.partitions ?? DEFAULT_PARTITIONS;
  const key = (n: string) => ({
    group: Connection.group,
    resource: Connection.plural,
    namespace: 'app',
    name: n,
  });
  const partition = partitionOf(key(name), partitions);
  for (let i = 2; ; i++)
    if (partitionOf(key(`${name}-${String(i)}`), partitions) === partition)
      return `${name}-${String(i)}`;
}
const APP = 'app';
const CONNECTIONS = `/apis/test.kubebus.dev/v1/namespaces/${APP}/connections`;

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

interface ConnectionObject {
  readonly status?: { fingerprint?: string; keys?: number; conditions?: Condition[] };
}

describe('ctx.readSecret under the generated RBAC', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let admin: KubeClient;
  let nc: NatsConnection;
  let running: RunningRole[] = [];
  // made for this run: found on the bus only if a value leaked there
  const passwords = [randomBytes(12).toString('hex'), randomBytes(12).toString('hex')];

  // no label naming the Connection: the watcher's index of references finds it
  const secret = (name: string, password: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: APP },
    stringData: { password, user: 'orders' },
  });

  const connection = (name: string, passwordSecret: string) =>
    admin.request(CONNECTIONS, {
      method: 'POST',
      body: {
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Connection',
        metadata: { name },
        spec: { passwordSecret },
      },
    });

  const statusOf = async (name: string) =>
    (await admin.request<ConnectionObject>(`${CONNECTIONS}/${name}`)).status ?? {};

  before(async () => {
    const [manifests, started] = await Promise.all([
      generatedManifests<Manifest>(
        fileURLToPath(new URL('../support/operators/connections.ts', import.meta.url)),
        'crd,rbac',
        NAMESPACE,
      ),
      TestBed.start(),
    ]);
    bed = started;
    admin = new KubeClient(
      await loadKubeConfig(bed.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
    for (const name of [NAMESPACE, APP])
      await admin.request('/api/v1/namespaces', {
        method: 'POST',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      });
    await applyAll(bed, manifests);
    await waitFor(
      async () =>
        (
          await admin.request<{ resources: { name: string }[] }>('/apis/test.kubebus.dev/v1')
        ).resources.some((r) => r.name === 'connections'),
      'the Connection CRD to be served',
    );
    nc = await connect({ servers: bed.natsUrl });
    running = await runRolesUnderAccounts(bed, connections, NAMESPACE);
  });

  after(async () => {
    for (const role of running.reverse()) await role.stop();
    await nc?.close();
    await bed?.stop();
  });

  it('reads the named Secret, and a new password reaches the status', async () => {
    const [first = '', second = ''] = passwords;
    await admin.request(`/api/v1/namespaces/${APP}/secrets`, {
      method: 'POST',
      body: secret(READABLE[0] ?? '', first),
    });
    // two Connections naming it, in one work partition: one change, a mark for each
    for (const name of SHARING) await connection(name, READABLE[0] ?? '');
    for (const name of SHARING)
      await waitFor(
        async () => (await statusOf(name)).fingerprint === fingerprintOf(first),
        `${name}'s status to show the password’s fingerprint`,
        120_000,
      );
    assert.equal((await statusOf('orders')).keys, 2);
    // the Secret changes: the Connections name it (references), so each is reconciled and reads it again
    await admin.request(`/api/v1/namespaces/${APP}/secrets/${READABLE[0] ?? ''}`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { stringData: { password: second } },
    });
    for (const name of SHARING)
      await waitFor(
        async () => (await statusOf(name)).fingerprint === fingerprintOf(second),
        `${name}'s status to show the new password’s fingerprint`,
        120_000,
      );
  });

  it('reaches the status with a password changed while the operator was stopped', async () => {
    for (const role of running.splice(0).reverse()) await role.stop();
    const third = randomBytes(12).toString('hex');
    passwords.push(third);
    await admin.request(`/api/v1/namespaces/${APP}/secrets/${READABLE[0] ?? ''}`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { stringData: { password: third } },
    });
    // the watcher lists the Connections into its index before any watch resumes
    running = await runRolesUnderAccounts(bed, connections, NAMESPACE);
    await waitFor(
      async () => (await statusOf('orders')).fingerprint === fingerprintOf(third),
      'the status to show the password changed while stopped',
      120_000,
    );
  });

  it('replays: a revision whose Secret is as it is today is compared, one it changed since is not', async () => {
    const replay = (operator: string) =>
      kubebusCli(
        [
          'replay',
          fileURLToPath(new URL(`../support/operators/${operator}`, import.meta.url)),
          `${APP}/orders`,
        ],
        { KUBEBUS_NATS_URL: bed.natsUrl, KUBECONFIG: bed.kubeconfigPath },
      );
    // the operator that recorded the history: revisions read earlier passwords, today's
    // differs from them, and that alone is no false alarm
    const same = await replay('connections.ts');
    assert.equal(same.status, 0, `${same.stdout}\n${same.stderr}`);
    assert.match(
      same.stdout,
      /\(changed since\) as they are today, not as they were .*: not compared/,
    );
    assert.match(same.stdout, /: status same as recorded$/m);
    // its next version computes another fingerprint: where the Secret is as it was then,
    // the difference is the operator's, and counted
    const changed = await replay('connections-changed.ts');
    assert.equal(changed.status, 1, `${changed.stdout}\n${changed.stderr}`);
    assert.match(changed.stdout, /: status differs from recorded\n {4}status\.fingerprint: /);
    assert.match(
      changed.stdout,
      /\(changed since\) as they are today, not as they were .*: not compared/,
    );
    for (const output of [same.stdout, same.stderr, changed.stdout, changed.stderr])
      for (const password of passwords) assert.ok(!output.includes(password), 'a password shown');
  });

  it('replays a revision from before its Secret was made as it was: without the Secret', async () => {
    // named before it exists: its first reconciles fail, then it reads the new Secret
    const late = READABLE[2] ?? '';
    await connection('later', late);
    // its reconcile ran without the Secret, and said so
    await waitFor(
      async () =>
        (await statusOf('later')).conditions?.some(
          (c) => c.type === 'Ready' && c.reason === 'SecretMissing',
        ) === true,
      'later to be Ready=False SecretMissing',
      120_000,
    );
    const password = randomBytes(12).toString('hex');
    passwords.push(password);
    await admin.request(`/api/v1/namespaces/${APP}/secrets`, {
      method: 'POST',
      body: secret(late, password),
    });
    await waitFor(
      async () => (await statusOf('later')).fingerprint === fingerprintOf(password),
      "later's status to show the password's fingerprint",
      120_000,
    );
    const replayed = await kubebusCli(
      [
        'replay',
        fileURLToPath(new URL('../support/operators/connections.ts', import.meta.url)),
        `${APP}/later`,
      ],
      { KUBEBUS_NATS_URL: bed.natsUrl, KUBECONFIG: bed.kubeconfigPath },
    );
    // its first revision read no Secret then, as the bus shows: compared (SecretMissing as
    // recorded), no advice to declare a watch it has, no values of today put in the past
    assert.equal(replayed.status, 0, `${replayed.stdout}\n${replayed.stderr}`);
    assert.doesNotMatch(replayed.stdout, /not recorded on the bus|as they are today/);
    assert.match(replayed.stdout, /: status same as recorded$/m);
    assert.ok(!replayed.stdout.includes(password), 'a password shown');
  });

  it('refuses a Secret its rule does not name, on the object and at the apiserver', async () => {
    await admin.request(`/api/v1/namespaces/${APP}/secrets`, {
      method: 'POST',
      body: secret('payroll', passwords[0] ?? ''),
    });
    await connection('billing', 'payroll');
    let ready: Condition | undefined;
    await waitFor(
      async () => {
        ready = (await statusOf('billing')).conditions?.find((c) => c.type === 'Ready');
        return ready?.reason === 'TerminalError';
      },
      'Connection billing to be Ready=False, reason TerminalError',
      120_000,
    );
    assert.equal(ready?.status, 'False');
    assert.match(ready?.message ?? '', /Secret payroll is not among the resourceNames/);
    await waitFor(async () => {
      const events = await admin.request<{
        items: { reason?: string; regarding?: { name?: string } }[];
      }>(`/apis/events.k8s.io/v1/namespaces/${APP}/events`);
      return events.items.some(
        (e) => e.reason === 'ReconcileFailed' && e.regarding?.name === 'billing',
      );
    }, 'a ReconcileFailed Warning Event about billing');
    // asked directly, with the reconciler's own token, the apiserver refuses it too
    const reconciler = new KubeClient(
      await loadKubeConfig(
        await bed.serviceAccountKubeconfig(NAMESPACE, `kubebus-${connections.name}-reconciler`),
        {},
      ),
      restClientMetrics(new Registry()),
    );
    for (const path of [`secrets/payroll`, 'secrets'])
      await assert.rejects(
        reconciler.request(`/api/v1/namespaces/${APP}/${path}`),
        (error: unknown) => isKubeApiError(error, 403),
        `the reconciler may GET ${path}`,
      );
  });

  it('never puts a Secret’s value on the bus', async () => {
    const jsm = await jetstreamManager(nc);
    const needles = passwords.flatMap((password) => [
      password,
      Buffer.from(password).toString('base64'),
    ]);
    let read = 0;
    // every message of every stream, by sequence (a work queue takes no second consumer)
    for await (const stream of jsm.streams.names()) {
      const { state } = await jsm.streams.info(stream);
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
        const message = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
        if (message === null) continue;
        read += 1;
        const headers = [...(message.header?.keys() ?? [])].flatMap(
          (key) => message.header?.values(key) ?? [],
        );
        const text = [...headers, Buffer.from(message.data).toString('latin1')].join('\n');
        for (const needle of needles)
          assert.ok(!text.includes(needle), `a Secret's value is in ${stream} #${String(seq)}`);
      }
    }
    assert.ok(read > 0, 'the bus recorded the changes');
  });
});
