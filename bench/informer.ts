// The DatabaseCluster operator as a TypeScript author writes it on
// @kubernetes/client-node alone: informers (list + watch into a cache) for the
// cluster and the four kinds it owns, an in-process keyed work queue (a key is
// never worked on twice at once, a change during work queues it again, failures
// back off exponentially), W workers, cached reads, server-side apply. The same
// writes, bodies and field managers as the example operator, and its external
// resource (a NATS object-store bucket per cluster, the example's own code).
//   KUBECONFIG=… BENCH_NATS_URL=nats://… BENCH_WORKERS=8 node dist/bench-informer.js
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  makeInformer,
  setHeaderOptions,
  type Informer,
  type KubernetesObject,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import tls from 'node:tls';
import { isDeepStrictEqual } from 'node:util';
import databaseCluster, {
  DatabaseCluster,
  observed,
} from '../examples/databasecluster/operator.js';
import {
  desiredConfigMap,
  desiredService,
  desiredStatefulSet,
  names,
  newCredentials,
} from '../examples/databasecluster/owned.js';
import { DatabaseClusterSpecSchema } from '../examples/databasecluster/spec.js';
import { BackupBuckets } from '../examples/databasecluster/backup-bucket.js';
import { connect as connectNats } from '@nats-io/transport-node';
import type { KubeObject } from '@kubebus/shared/events';
import { controllerReference } from '@kubebus/shared/kube';
import type { DesiredObject } from 'kubebus';
import { reconciledStatus } from '../services/reconciler/src/operator/status.js';

const workers = Number(process.env['BENCH_WORKERS'] ?? 8);
// The driver asks for the TLS connections opened so far, in kubebus' metric format.
let connections = 0;
const connect = tls.connect.bind(tls);
tls.connect = ((...args: Parameters<typeof tls.connect>) => {
  connections++;
  return connect(...args);
}) as typeof tls.connect;
process.on('SIGUSR2', () => {
  process.stdout.write(`kubebus_rest_client_connections_total{client="informer"} ${connections}\n`);
});
const kc = new KubeConfig();
kc.loadFromFile(process.env['KUBECONFIG'] ?? '');
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const events = kc.makeApiClient(EventsV1Api);
const objects = KubernetesObjectApi.makeApiClient(kc);
const applyPatch = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
const { group, version, plural } = DatabaseCluster;
const FIELD_MANAGER = 'kubebus-databasecluster';
const buckets = new BackupBuckets(
  await connectNats({ servers: process.env['BENCH_NATS_URL'] ?? '' }),
);

const clusters = makeInformer<KubeObject & KubernetesObject>(
  kc,
  `/apis/${group}/${version}/${plural}`,
  async () => (await custom.listClusterCustomObject({ group, version, plural })) as never,
);
const owned = {
  statefulSets: makeInformer(kc, '/apis/apps/v1/statefulsets', () =>
    apps.listStatefulSetForAllNamespaces(),
  ),
  services: makeInformer(kc, '/api/v1/services', () => core.listServiceForAllNamespaces()),
  configMaps: makeInformer(kc, '/api/v1/configmaps', () => core.listConfigMapForAllNamespaces()),
  secrets: makeInformer(kc, '/api/v1/secrets', () => core.listSecretForAllNamespaces()),
};

// The keyed queue, as client-go's workqueue: queued keys in order, the keys being
// worked on, and the keys that changed while worked on (queued again after).
const queued = new Set<string>();
const working = new Set<string>();
const dirty = new Set<string>();
const failures = new Map<string, number>();
const idle: (() => void)[] = []; // workers waiting for a key

function enqueue(key: string): void {
  if (working.has(key)) dirty.add(key);
  else if (!queued.has(key)) {
    queued.add(key);
    idle.shift()?.();
  }
}

const keyOf = (namespace: string | undefined, name: string | undefined) =>
  `${namespace ?? ''}/${name ?? ''}`;

const enqueueCluster = (o: KubeObject) => {
  enqueue(keyOf(o.metadata.namespace, o.metadata.name));
};
clusters.on('add', enqueueCluster);
clusters.on('update', enqueueCluster);
/** an owned object's change reconciles its controller */
function enqueueOwnerOf<T extends KubernetesObject>(informer: Informer<T>): void {
  const enqueueOwner = (o: T) => {
    const owner = o.metadata?.ownerReferences?.find((ref) => ref.controller === true);
    if (owner?.kind === DatabaseCluster.kind) enqueue(keyOf(o.metadata?.namespace, owner.name));
  };
  informer.on('add', enqueueOwner);
  informer.on('update', enqueueOwner);
  informer.on('delete', enqueueOwner);
}
enqueueOwnerOf(owned.statefulSets);
enqueueOwnerOf(owned.services);
enqueueOwnerOf(owned.configMaps);
enqueueOwnerOf(owned.secrets);

/** The body with the cluster as its controller owner, as kubebus' ctx.apply sends it. */
function withOwner(cluster: KubeObject, body: DesiredObject): KubernetesObject {
  return {
    ...body,
    metadata: { ...body.metadata, ownerReferences: [controllerReference(cluster)] },
  };
}

async function event(cluster: KubeObject, reason: string, note: string): Promise<void> {
  const namespace = cluster.metadata.namespace ?? 'default';
  await events.createNamespacedEvent({
    namespace,
    body: {
      metadata: { name: `${cluster.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
      // client-node sends a Date with milliseconds, which the apiserver refuses as a
      // MicroTime (400); a string in its format passes through unchanged
      eventTime: new Date().toISOString().replace('Z', '000Z') as unknown as Date,
      type: 'Normal',
      reason,
      note,
      action: 'Provision',
      reportingController: 'kubebus.dev/databasecluster',
      reportingInstance: 'informer',
      regarding: {
        apiVersion: cluster.apiVersion,
        kind: cluster.kind,
        name: cluster.metadata.name,
        namespace,
        uid: cluster.metadata.uid,
        resourceVersion: cluster.metadata.resourceVersion,
      },
    },
  });
}

async function setFinalizer(cluster: KubeObject, finalizers: string[]): Promise<void> {
  const { name, namespace = 'default', uid } = cluster.metadata;
  await objects.patch(
    {
      apiVersion: cluster.apiVersion,
      kind: cluster.kind,
      metadata: { name, namespace, uid, finalizers },
    },
    undefined,
    undefined,
    `${FIELD_MANAGER}-finalizer`,
    true,
    PatchStrategy.ServerSideApply,
  );
}

async function reconcile(key: string): Promise<void> {
  const [namespace, name] = key.split('/') as [string, string];
  const cluster = clusters.get(name, namespace);
  if (cluster === undefined) return;
  const finalizer = databaseCluster.finalizer;
  const finalizers = cluster.metadata['finalizers'] ?? [];
  if (cluster.metadata['deletionTimestamp'] !== undefined) {
    if (finalizers.includes(finalizer)) {
      if ((await buckets.remove(cluster.metadata.uid)) === 'removed')
        await event(cluster, 'BucketRemoved', 'Removed the backup bucket');
      await setFinalizer(cluster, []);
    }
    return;
  }
  if (!finalizers.includes(finalizer)) await setFinalizer(cluster, [finalizer]);
  if ((await buckets.ensure(cluster.metadata.uid)) === 'created')
    await event(cluster, 'BucketCreated', 'Created the backup bucket');
  const spec = DatabaseClusterSpecSchema.parse(cluster['spec']);
  const secret = newCredentials(cluster, spec);
  if (owned.secrets.get(names(cluster).secret, namespace) === undefined) {
    const created = await core
      .createNamespacedSecret({
        namespace,
        body: withOwner(cluster, secret),
        fieldManager: FIELD_MANAGER,
      })
      .then(
        () => true,
        (error: unknown) => {
          // the cache may not show a Secret created a moment ago
          if ((error as { code?: number }).code === 409) return false;
          throw error;
        },
      );
    if (created)
      await event(cluster, 'CredentialsCreated', `Created Secret ${names(cluster).secret}`);
  }
  for (const body of [
    desiredService(cluster, spec),
    desiredConfigMap(cluster, spec),
    desiredStatefulSet(cluster, spec),
  ]) {
    await objects.patch(
      withOwner(cluster, body),
      undefined,
      undefined,
      FIELD_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
  }
  const statefulSet: V1StatefulSet | undefined = owned.statefulSets.get(name, namespace);
  const result = observed(cluster, spec, statefulSet?.status?.readyReplicas ?? 0);
  const status = {
    ...reconciledStatus(cluster, result.status, result.ready, result.conditions),
    observedGeneration: cluster.metadata.generation ?? 0,
  };
  if (isDeepStrictEqual(status, cluster['status'])) return;
  await custom.patchNamespacedCustomObjectStatus(
    {
      group,
      version,
      namespace,
      plural,
      name,
      body: {
        apiVersion: cluster.apiVersion,
        kind: cluster.kind,
        metadata: { name, namespace, uid: cluster.metadata.uid },
        status,
      },
      fieldManager: 'kubebus-status-writer',
      force: true,
    },
    applyPatch,
  );
}

async function worker(): Promise<void> {
  for (;;) {
    const [key] = queued;
    if (key === undefined) {
      await new Promise<void>((resolve) => idle.push(resolve));
      continue;
    }
    queued.delete(key);
    working.add(key);
    try {
      await reconcile(key);
      failures.delete(key);
    } catch (error) {
      // exponential backoff per key, 100 ms to 60 s
      const failed = (failures.get(key) ?? 0) + 1;
      failures.set(key, failed);
      process.stderr.write(`informer: ${key}: ${(error as Error).message}\n`);
      setTimeout(
        () => {
          enqueue(key);
        },
        Math.min(100 * 2 ** (failed - 1), 60_000),
      );
    } finally {
      working.delete(key);
      if (dirty.delete(key)) enqueue(key);
    }
  }
}

// An informer stops on a watch error; client-node's own example restarts it.
for (const [name, informer] of Object.entries({ clusters, ...owned })) {
  informer.on('error', (error: unknown) => {
    process.stderr.write(`informer: ${name} watch failed (${String(error)}); restarting\n`);
    setTimeout(() => void informer.start(), 1_000);
  });
}
await Promise.all([clusters, ...Object.values(owned)].map((informer) => informer.start()));
for (let i = 0; i < workers; i++) void worker();
process.stdout.write('ready\n');
