// The ceiling: the minimum writes any DatabaseCluster operator must make, as
// fast as the apiserver takes them. One watch tells it of each new generation;
// W workers send the writes over kubebus's own keep-alive REST client, with
// the same bodies and field managers as the example operator — and no bus, no
// re-reconcile, no reads. Create: finalizer, Secret, two Events, three
// applies, status (8 writes). Update: three applies, status (4).
//   KUBECONFIG=… BENCH_WORKERS=8 node --conditions=source --import tsx bench/ceiling.ts
import type { KubeObject } from '@kubebus/shared/events';
import {
  KubeClient,
  apply,
  controllerReference,
  type ApplyBody,
  type ResourceRef,
  listPages,
  recordEvent,
  setFinalizer,
  watchEvents,
} from '@kubebus/shared/kube';
import { restClientMetrics } from '@kubebus/shared/obs';
import { Registry } from 'prom-client';
import databaseCluster, {
  DatabaseCluster,
  observed,
} from '../examples/databasecluster/operator.js';
import {
  desiredConfigMap,
  desiredService,
  desiredStatefulSet,
  newCredentials,
} from '../examples/databasecluster/owned.js';
import { DatabaseClusterSpecSchema } from '../examples/databasecluster/spec.js';
import { reconciledStatus } from '../services/reconciler/src/operator/status.js';
import { loadKubeConfig } from '@kubebus/shared/kube';

const workers = Number(process.env['BENCH_WORKERS'] ?? 8);
const registry = new Registry();
const metrics = restClientMetrics(registry);
const client = new KubeClient(await loadKubeConfig(process.env['KUBECONFIG']), metrics);
// The driver asks for the connections opened so far (the same counter kubebus exports).
process.on('SIGUSR2', () => {
  void registry.getSingleMetricAsString('kubebus_rest_client_connections_total').then((text) => {
    process.stdout.write(`${text}\n`);
  });
});
const fieldManager = 'kubebus-databasecluster';
const FINALIZER = databaseCluster.finalizer;
const DATABASE_CLUSTERS: ResourceRef = {
  group: DatabaseCluster.group,
  version: DatabaseCluster.version,
  resource: DatabaseCluster.plural,
  namespaced: true,
};
const Resources = {
  services: { group: '', version: 'v1', resource: 'services', namespaced: true },
  configMaps: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
  statefulSets: { group: 'apps', version: 'v1', resource: 'statefulsets', namespaced: true },
} as const satisfies Record<string, ResourceRef>;

/** The body kubebus' ctx.apply sends: the controller owner reference added. */
function owned(cluster: KubeObject, body: ApplyBody): ApplyBody {
  return {
    ...body,
    metadata: { ...body.metadata, ownerReferences: [controllerReference(cluster)] },
  };
}
const done = new Map<string, number>(); // uid → generation written
const inFlight = new Map<string, number>(); // uid → generation being written
const queue: KubeObject[] = [];
const idle: (() => void)[] = []; // workers waiting for work

async function converge(cluster: KubeObject): Promise<void> {
  const spec = DatabaseClusterSpecSchema.parse(cluster['spec']);
  const first = !done.has(cluster.metadata.uid);
  const options = { fieldManager };
  if (first) {
    await setFinalizer(client, DATABASE_CLUSTERS, cluster, FINALIZER, true, fieldManager);
    await client.request(`/api/v1/namespaces/${cluster.metadata.namespace ?? ''}/secrets`, {
      method: 'POST',
      query: { fieldManager },
      body: owned(cluster, newCredentials(cluster, spec)),
    });
    const event = (reason: string, note: string) =>
      recordEvent(client, cluster, {
        type: 'Normal',
        reason,
        note,
        action: 'Provision',
        reportingController: 'kubebus.dev/databasecluster',
        reportingInstance: 'ceiling',
      });
    await Promise.all([
      event('BucketCreated', 'Created the backup bucket'),
      event('CredentialsCreated', 'Created Secret'),
    ]);
  }
  await Promise.all([
    apply(client, Resources.services, owned(cluster, desiredService(cluster, spec)), options),
    apply(client, Resources.configMaps, owned(cluster, desiredConfigMap(cluster, spec)), options),
    apply(
      client,
      Resources.statefulSets,
      owned(cluster, desiredStatefulSet(cluster, spec)),
      options,
    ),
  ]);
  const result = observed(cluster, spec, 0);
  const status = reconciledStatus(cluster, result.status, result.ready, result.conditions);
  await apply(
    client,
    DATABASE_CLUSTERS,
    {
      apiVersion: cluster.apiVersion,
      kind: cluster.kind,
      metadata: {
        name: cluster.metadata.name,
        namespace: cluster.metadata.namespace ?? '',
        uid: cluster.metadata.uid,
      },
      status: { ...status, observedGeneration: cluster.metadata.generation ?? 0 },
    },
    { fieldManager: 'kubebus-status-writer', subresource: 'status' },
  );
  done.set(cluster.metadata.uid, cluster.metadata.generation ?? 0);
}

function offer(cluster: KubeObject): void {
  const generation = cluster.metadata.generation ?? 0;
  if ((done.get(cluster.metadata.uid) ?? 0) >= generation) return;
  if ((inFlight.get(cluster.metadata.uid) ?? 0) >= generation) return;
  if (
    queue.some(
      (q) => q.metadata.uid === cluster.metadata.uid && (q.metadata.generation ?? 0) >= generation,
    )
  )
    return;
  queue.push(cluster);
  idle.shift()?.();
}

async function worker(): Promise<void> {
  for (;;) {
    const next = queue.shift();
    if (next === undefined) {
      await new Promise<void>((resolve) => idle.push(resolve));
      continue;
    }
    inFlight.set(next.metadata.uid, next.metadata.generation ?? 0);
    await converge(next).catch((error: unknown) => {
      process.stderr.write(`ceiling: ${(error as Error).message}\n`);
    });
    inFlight.delete(next.metadata.uid);
  }
}

const scope = { resource: DATABASE_CLUSTERS };
let resourceVersion = '';
for await (const page of listPages(client, scope)) {
  page.items.forEach(offer);
  resourceVersion = page.resourceVersion;
}
for (let i = 0; i < workers; i++) void worker();
process.stdout.write('ready\n');
for (;;) {
  for await (const event of watchEvents(client, scope, {
    resourceVersion,
    inactivityMs: 600_000,
    timeoutSeconds: 300,
  })) {
    if (event.type === 'ADDED' || event.type === 'MODIFIED') {
      offer(event.object);
      resourceVersion = event.object.metadata.resourceVersion;
    } else if (event.type === 'BOOKMARK') resourceVersion = event.resourceVersion;
  }
}
