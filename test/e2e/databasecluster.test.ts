// The DatabaseCluster operator end to end: watcher → reconciler → status writer,
// each a process, against a real kube-apiserver (with the garbage collector of
// kube-controller-manager) and a real nats-server.
import { Streams } from '@kubebus/shared/bus';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { kubebusCli } from '../support/kubebus-cli.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import { readStream } from '../support/stream.js';
import { waitFor } from '../support/wait.js';
import { CREDENTIALS_ANNOUNCED as ANNOUNCED } from '../../examples/databasecluster/owned.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };

interface Cluster {
  metadata: {
    name: string;
    uid: string;
    generation: number;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec: Record<string, unknown>;
  status?: {
    phase?: string;
    readyReplicas?: number;
    endpoint?: string;
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe('DatabaseCluster operator', { timeout: 900_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let pipeline: Pipeline;

  before(async () => {
    bed = await TestBed.start({ controllerManager: true });
    nc = await connect({ servers: bed.natsUrl });
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher();
    await pipeline.reconciler();
    await pipeline.statusWriter();
  });

  after(async () => {
    await pipeline.stop();
    await nc.close();
    await bed.stop();
  });

  const kc = () => bed.kubeConfig();
  const custom = () => kc().makeApiClient(CustomObjectsApi);
  const core = () => kc().makeApiClient(CoreV1Api);
  const apps = () => kc().makeApiClient(AppsV1Api);
  const namespace = (name: string) => core().createNamespace({ body: { metadata: { name } } });

  const create = (ns: string, name: string, spec: Record<string, unknown>) =>
    custom().createNamespacedCustomObject({
      ...target,
      namespace: ns,
      body: {
        apiVersion: `${target.group}/${target.version}`,
        kind: 'DatabaseCluster',
        metadata: { name },
        spec,
      },
    }) as Promise<Cluster>;
  const read = (ns: string, name: string) =>
    custom().getNamespacedCustomObject({ ...target, namespace: ns, name }) as Promise<Cluster>;
  const patchSpec = (ns: string, name: string, spec: Record<string, unknown>) =>
    custom().patchNamespacedCustomObject(
      { ...target, namespace: ns, name, body: { spec } },
      mergePatch,
    ) as Promise<Cluster>;
  const condition = (cluster: Cluster, type: string) =>
    cluster.status?.conditions?.find((c) => c.type === type);
  const converged = async (ns: string, name: string) => {
    const cluster = await read(ns, name);
    return cluster.status?.observedGeneration === cluster.metadata.generation ? cluster : undefined;
  };
  /** Plays the kubelet: no kubelet runs here, so the test reports the pods ready. */
  const reportReady = async (ns: string, name: string, readyReplicas: number) => {
    await apps().patchNamespacedStatefulSetStatus(
      {
        name,
        namespace: ns,
        body: {
          status: { replicas: readyReplicas, readyReplicas, availableReplicas: readyReplicas },
        },
      },
      mergePatch,
    );
  };
  const bucketExists = async (uid: string) => {
    const jsm = await jetstreamManager(nc);
    return jsm.streams
      .info(`OBJ_kubebus-backups-${uid}`)
      .then(() => true)
      .catch(() => false);
  };

  it('creates the owned objects, the bucket and a status that follows readiness', async () => {
    await namespace('shop');
    const created = await create('shop', 'orders', {
      engine: 'postgres',
      version: '16',
      storage: { size: '10Gi' },
      backup: { schedule: '0 3 * * *' },
    });
    await waitFor(
      async () => (await converged('shop', 'orders')) !== undefined,
      'the first status',
    );

    const cluster = await read('shop', 'orders');
    assert.equal(cluster.status?.phase, 'Provisioning');
    assert.equal(condition(cluster, 'Ready')?.reason, 'WaitingForReplicas');
    assert.equal(cluster.status?.endpoint, 'orders.shop.svc:5432');
    assert.deepEqual(cluster.metadata.finalizers, ['example.kubebus.dev/backup-bucket']);
    assert.ok(await bucketExists(created.metadata.uid), 'the backup bucket exists');

    const sts = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    assert.equal(sts.spec?.replicas, 3, 'replicas default to 3');
    assert.equal(sts.spec?.template.spec?.containers[0]?.image, 'postgres:16');
    assert.equal(sts.metadata?.ownerReferences?.[0]?.uid, created.metadata.uid);
    assert.equal(sts.metadata?.ownerReferences?.[0]?.controller, true);
    const svc = await core().readNamespacedService({ name: 'orders', namespace: 'shop' });
    assert.equal(svc.spec?.clusterIP, 'None');
    const config = await core().readNamespacedConfigMap({
      name: 'orders-config',
      namespace: 'shop',
    });
    assert.equal(config.data?.['backup-schedule'], '0 3 * * *');
    const secret = await core().readNamespacedSecret({
      name: 'orders-credentials',
      namespace: 'shop',
    });
    assert.ok((secret.data?.['password'] ?? '').length >= 24, 'generated credentials');

    await reportReady('shop', 'orders', 3);
    await waitFor(
      async () => (await read('shop', 'orders')).status?.phase === 'Ready',
      'phase Ready',
    );
    const ready = await read('shop', 'orders');
    assert.equal(ready.status?.readyReplicas, 3);
    assert.equal(condition(ready, 'Ready')?.status, 'True');
    assert.equal(condition(ready, 'Progressing')?.status, 'False');
    assert.equal(condition(ready, 'Degraded')?.status, 'False');
  });

  it('keeps the generated credentials when it reconciles again, and never publishes them', async () => {
    const before = await core().readNamespacedSecret({
      name: 'orders-credentials',
      namespace: 'shop',
    });
    await patchSpec('shop', 'orders', { replicas: 5 });
    await waitFor(
      async () => (await converged('shop', 'orders')) !== undefined,
      'the scaled status',
    );
    const sts = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    assert.equal(sts.spec?.replicas, 5, 'the StatefulSet follows the spec');
    const after = await core().readNamespacedSecret({
      name: 'orders-credentials',
      namespace: 'shop',
    });
    assert.equal(
      after.data?.['password'],
      before.data?.['password'],
      'created once, never regenerated',
    );

    const password = Buffer.from(after.data?.['password'] ?? '', 'base64').toString();
    for (const stream of [Streams.events, Streams.work, Streams.status, Streams.deadLetters]) {
      for (const message of await readStream(nc, stream).catch(() => [])) {
        const text = new TextDecoder().decode(message.data);
        assert.ok(!text.includes(password), `the password leaked into ${stream}`);
        assert.ok(
          !text.includes(after.data?.['password'] ?? '#'),
          `the password leaked into ${stream}`,
        );
      }
    }
    for (const service of pipeline.services) {
      assert.ok(
        !JSON.stringify(service.logs()).includes(password),
        `the password leaked into ${service.name}'s log`,
      );
    }
  });

  it('announces the credentials once and marks the Secret announced', async () => {
    // the mark is what lets a reconcile that died after creating the Secret post the
    // Event on its retry (kubebus test's intermediate schedules crash it there)
    await waitFor(async () => {
      const secret = await core().readNamespacedSecret({
        name: 'orders-credentials',
        namespace: 'shop',
      });
      return secret.metadata?.annotations?.[ANNOUNCED] === 'true';
    }, 'the credentials Secret to be marked announced');
    // the Event goes in the background beside the annotation (ADR 0029): it may land a moment later
    const announcementsOf = async () =>
      (
        await kc().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: 'shop' })
      ).items.filter((e) => e.reason === 'CredentialsCreated' && e.regarding?.name === 'orders');
    await waitFor(async () => (await announcementsOf()).length > 0, 'the CredentialsCreated Event');
    const announcements = await announcementsOf();
    assert.equal(announcements.length, 1, 'one CredentialsCreated Event');
    assert.equal(announcements[0]?.note, 'Created Secret orders-credentials');
  });

  it('refuses a storage size change at admission, with a clear message, and stays healthy', async () => {
    const before = await read('shop', 'orders');
    await assert.rejects(
      patchSpec('shop', 'orders', { storage: { size: '20Gi' } }),
      (error: { code?: number; body?: string }) =>
        error.code === 422 &&
        /spec\.storage: Forbidden: storage\.size cannot change once the cluster exists/.test(
          String(error.body),
        ),
    );
    // the same quantity written differently is no change: accepted, and applied
    const same = await patchSpec('shop', 'orders', { storage: { size: '10240Mi' } });
    assert.equal(same.metadata.generation, before.metadata.generation + 1);
    await waitFor(
      async () => (await converged('shop', 'orders')) !== undefined,
      'the status of the rewritten size',
    );
    const cluster = await read('shop', 'orders');
    assert.notEqual(condition(cluster, 'Degraded')?.status, 'True', 'not Degraded');
    const sts = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    assert.equal(
      sts.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.['storage'],
      '10Gi',
    );
  });

  it('sends no write when it reconciles a cluster whose owned objects are already in place', async () => {
    const reconciler = pipeline.services.find((s) => s.name.startsWith('reconciler'));
    assert.ok(reconciler);
    const writes = async () =>
      (await reconciler.metric('rest_client_requests_total', { method: 'PATCH' })) +
      (await reconciler.metric('rest_client_requests_total', { method: 'POST' }));
    const reconciles = () => reconciler.metric('controller_runtime_reconcile_total');
    await waitFor(async () => {
      // settled: nothing left to do for this cluster
      const before = await reconciles();
      await new Promise((resolve) => setTimeout(resolve, 500));
      return (await reconciles()) === before;
    }, 'the reconciler to settle');
    const writesBefore = await writes();
    const reconcilesBefore = await reconciles();
    // A metadata-only change: the watcher sees it, the reconciler runs again.
    await custom().patchNamespacedCustomObject(
      {
        ...target,
        namespace: 'shop',
        name: 'orders',
        body: { metadata: { labels: { touched: 'yes' } } },
      },
      mergePatch,
    );
    await waitFor(async () => (await reconciles()) > reconcilesBefore, 'another reconcile');
    assert.equal(await writes(), writesBefore, 'no apply, create or finalizer write was sent');
  });

  it('brings back an owned object that was deleted', async () => {
    const before = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    await apps().deleteNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    let recreated: V1StatefulSet | undefined;
    await waitFor(async () => {
      recreated = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
      return recreated.metadata?.uid !== before.metadata?.uid;
    }, 'the StatefulSet to come back');
    assert.equal(recreated?.spec?.replicas, 5);
  });

  it('replays its reconciler over the recorded history as a dry run', async () => {
    const clusterBefore = await read('shop', 'orders');
    const stsBefore = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    const subject = 'kubebus.events.example_kubebus_dev.databaseclusters.shop.orders';
    const eventsBefore = (await readStream(nc, Streams.events, subject)).length;
    const result = await kubebusCli(
      ['replay', 'examples/databasecluster/operator.ts', 'shop/orders'],
      {
        KUBEBUS_NATS_URL: bed.natsUrl,
        KUBECONFIG: bed.kubeconfigPath,
      },
    );
    const lines = result.stdout
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('#'));
    // the unchanged operator agrees with its own history: exit 0, no false alarm (a CI gate)
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.equal(lines.length, eventsBefore, `one line per recorded revision:\n${result.stdout}`);
    assert.ok(
      lines.every((line) =>
        /^#\d+ (add|update) rv \d+ generation \d+: (status same as recorded|not reconciled on its own \(coalesced into a later change\))$/.test(
          line,
        ),
      ),
      result.stdout,
    );
    assert.ok(
      lines.some((line) => line.endsWith('same as recorded')),
      result.stdout,
    );
    // A dry run: nothing was written.
    assert.equal(
      (await read('shop', 'orders')).metadata.generation,
      clusterBefore.metadata.generation,
    );
    const stsAfter = await apps().readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' });
    assert.equal(stsAfter.metadata?.resourceVersion, stsBefore.metadata?.resourceVersion);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(
      (await readStream(nc, Streams.events, subject)).length,
      eventsBefore,
      'no new revision',
    );
  });

  it('turns an invalid spec into Ready=False/InvalidSpec and an Event, without retrying it', async () => {
    await namespace('bad');
    // The generated CRD schema rejects what OpenAPI can express, at admission:
    await assert.rejects(
      create('bad', 'zero', {
        engine: 'postgres',
        version: '16',
        replicas: 0,
        storage: { size: '1Gi' },
      }),
      (error: { code?: number; body?: string }) =>
        error.code === 422 && /replicas/.test(String(error.body)),
    );
    // ...and the reconciler catches the rules it cannot (engine/version, cron):
    await create('bad', 'mismatch', { engine: 'mysql', version: '16', storage: { size: '1Gi' } });
    await waitFor(
      async () => (await converged('bad', 'mismatch')) !== undefined,
      'the InvalidSpec status',
    );
    const cluster = await read('bad', 'mismatch');
    const ready = condition(cluster, 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'InvalidSpec');
    assert.match(ready?.message ?? '', /spec\.version: mysql 16 is not supported/);
    assert.equal(cluster.status?.phase, 'Failed');

    // recorded in the background (ADR 0029), after the status
    const warningOf = async () =>
      (await kc().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: 'bad' })).items.find(
        (e) => e.reason === 'InvalidSpec' && e.regarding?.name === 'mismatch',
      );
    await waitFor(async () => (await warningOf()) !== undefined, 'the InvalidSpec Event');
    const warning = await warningOf();
    assert.equal(warning?.type, 'Warning');
    assert.match(warning?.note ?? '', /mysql 16 is not supported/);

    const reconciler = pipeline.services.find((s) => s.name.startsWith('reconciler'));
    assert.ok(reconciler);
    const terminal = await reconciler.metric('controller_runtime_terminal_reconcile_errors_total');
    assert.ok(terminal >= 1);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(
      await reconciler.metric('controller_runtime_terminal_reconcile_errors_total'),
      terminal,
      'not retried',
    );

    await patchSpec('bad', 'mismatch', { version: '8.4' });
    await waitFor(async () => {
      const fixed = await converged('bad', 'mismatch');
      return fixed !== undefined && condition(fixed, 'Ready')?.reason === 'WaitingForReplicas';
    }, 'the fixed spec to reconcile');
  });

  it('refuses at admission a name that cannot name its Service, with a clear message', async () => {
    await namespace('names');
    for (const name of ['db.prod', `db-${'x'.repeat(60)}`]) {
      await assert.rejects(
        create('names', name, { engine: 'postgres', version: '15', storage: { size: '1Gi' } }),
        (error: { code?: number; body?: string }) =>
          error.code === 422 &&
          /names the cluster's Service and StatefulSet/.test(String(error.body)),
        name,
      );
    }
  });

  it('parks an object that keeps failing in the DLQ once, with Degraded, while others converge', async () => {
    await namespace('poison');
    // A policy that refuses every Secret here (422): every reconcile of a cluster
    // in this namespace fails on its own write, deterministically — the
    // object's fault, not an outage.
    const admission = kc().makeApiClient(AdmissionregistrationV1Api);
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'no-secrets' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE'],
                resources: ['secrets'],
              },
            ],
          },
          validations: [{ expression: 'false', message: 'no Secrets here', reason: 'Invalid' }],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name: 'no-secrets' },
        spec: {
          policyName: 'no-secrets',
          validationActions: ['Deny'],
          matchResources: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'poison' } },
          },
        },
      },
    });
    await waitFor(
      () =>
        core()
          .createNamespacedSecret({
            namespace: 'poison',
            body: { metadata: { generateName: 'probe-' } },
          })
          .then(
            () => false,
            (error: { code?: number }) => error.code === 422,
          ),
      'the admission policy to refuse Secrets',
    );
    const reconciler = pipeline.services.find((s) => s.name.startsWith('reconciler'));
    assert.ok(reconciler);
    const skippedBefore = await reconciler.metric('kubebus_reconcile_parked_skips_total');
    await create('poison', 'stuck', {
      engine: 'postgres',
      version: '15',
      storage: { size: '1Gi' },
    });
    await namespace('poison-neighbour');
    await create('poison-neighbour', 'healthy', {
      engine: 'postgres',
      version: '15',
      storage: { size: '1Gi' },
    });
    await waitFor(
      async () => (await converged('poison-neighbour', 'healthy')) !== undefined,
      'the healthy cluster',
    );
    await waitFor(
      async () => condition(await read('poison', 'stuck'), 'Degraded')?.status === 'True',
      'the Degraded condition',
      90_000,
    );
    const degraded = condition(await read('poison', 'stuck'), 'Degraded');
    assert.equal(degraded?.reason, 'RetryBudgetSpent');
    assert.match(degraded?.message ?? '', /3 attempts failed: .*422.*no Secrets here/);
    // kubectl users see it too: Ready=False for the same reason, and one Warning Event
    const ready = condition(await read('poison', 'stuck'), 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'RetryBudgetSpent');
    let redriveHint = '';
    await waitFor(async () => {
      const events = await bed
        .kubeConfig()
        .makeApiClient(EventsV1Api)
        .listNamespacedEvent({ namespace: 'poison' });
      const warning = events.items.find(
        (event) =>
          event.type === 'Warning' &&
          event.reason === 'RetryBudgetSpent' &&
          event.regarding?.name === 'stuck' &&
          /no Secrets here/.test(event.note ?? ''),
      );
      redriveHint =
        /after the fix: (kubebus dlq redrive \d+)$/.exec(warning?.note ?? '')?.[1] ?? '';
      return warning !== undefined;
    }, 'the Warning Event of the dead letter');
    // The Degraded write changes the object; that change is seen and skipped,
    // not a second round of retries ending in a second letter.
    await waitFor(
      async () => (await reconciler.metric('kubebus_reconcile_parked_skips_total')) > skippedBefore,
      'the reconciler to see the Degraded object and leave it parked',
    );
    const letters = (await readStream(nc, Streams.deadLetters, 'kubebus.dlq.databasecluster.>'))
      .map(
        (m) =>
          JSON.parse(new TextDecoder().decode(m.data)) as {
            key: { name: string };
            code: string;
            attempts: number;
          },
      )
      .filter((l) => l.key.name === 'stuck');
    assert.equal(letters.length, 1, 'one letter');
    // the Event names the letter to re-drive by its sequence
    const stuckSeqs = (await readStream(nc, Streams.deadLetters, 'kubebus.dlq.databasecluster.>'))
      .filter((m) => new TextDecoder().decode(m.data).includes('"name":"stuck"'))
      .map((m) => m.seq);
    assert.equal(redriveHint, `kubebus dlq redrive ${String(stuckSeqs[0])}`);
    assert.equal(letters[0]?.code, 'KUBEBUS_KUBE_API');
    assert.equal(
      letters[0]?.attempts,
      3,
      'a 422 on its own write gets a few tries, not the budget',
    );
  });

  it('runs the finalizer on delete: removes the bucket, then lets the cluster and its objects go', async () => {
    const cluster = await read('shop', 'orders');
    await custom().deleteNamespacedCustomObject({ ...target, namespace: 'shop', name: 'orders' });
    await waitFor(
      async () =>
        read('shop', 'orders').then(
          () => false,
          (error: { code?: number }) => error.code === 404,
        ),
      'the cluster to be gone',
    );
    assert.equal(await bucketExists(cluster.metadata.uid), false, 'the bucket was removed');
    await waitFor(
      async () =>
        apps()
          .readNamespacedStatefulSet({ name: 'orders', namespace: 'shop' })
          .then(
            () => false,
            (error: { code?: number }) => error.code === 404,
          ),
      'the garbage collector to remove the StatefulSet',
      // kube-controller-manager rediscovers resources every 30 s; the CRD came after it started
      150_000,
    );
  });

  it("lets a deleted PersistentVolumeClaim go (the bed's volume protection controller)", async () => {
    // an operator that owns volumes (a StatefulSet's claims, a backup's PVC) sees them
    // deleted as on a cluster, not Terminating for ever on their pvc-protection finalizer
    await namespace('volumes');
    await core().createNamespacedPersistentVolumeClaim({
      namespace: 'volumes',
      body: {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const created = await core().readNamespacedPersistentVolumeClaim({
      namespace: 'volumes',
      name: 'data',
    });
    assert.ok(created.metadata?.finalizers?.includes('kubernetes.io/pvc-protection'));
    await core().deleteNamespacedPersistentVolumeClaim({ namespace: 'volumes', name: 'data' });
    await waitFor(
      async () =>
        await core()
          .readNamespacedPersistentVolumeClaim({ namespace: 'volumes', name: 'data' })
          .then(
            () => false,
            () => true,
          ),
      'the claim gone',
      60_000,
    );
  });
});
