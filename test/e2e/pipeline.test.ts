// The whole pipeline at volume, and the status writer's guarantees: 200
// DatabaseClusters converge with at most one /status patch per generation, a
// killed writer loses nothing, stale intents never regress a status, rejected
// patches go to the DLQ, and one trace id follows a change through all three.
import { DeadLetterSchema, StatusPublisher, Streams } from '@kubebus/shared/bus';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import {
  PARTITIONS,
  Pipeline,
  STATUS_PARTITIONS,
  installDatabaseClusterCrd,
} from '../support/pipeline.js';
import type { ServiceProcess } from '../support/services.js';
import { readStream } from '../support/stream.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const COUNT = 200;

interface Cluster {
  apiVersion: string;
  kind: string;
  metadata: { name: string; uid: string; generation: number };
  status?: {
    observedGeneration?: number;
    phase?: string;
    conditions?: { type: string; status: string; reason: string }[];
  };
}

describe('pipeline and status writer', { timeout: 900_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let pipeline: Pipeline;
  let writer: ServiceProcess;
  const writers: ServiceProcess[] = [];

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher();
    await pipeline.reconciler({ KUBEBUS_MAX_CONCURRENT: '16' });
    await pipeline.reconciler({ KUBEBUS_MAX_CONCURRENT: '16' });
    writer = await pipeline.statusWriter();
    writers.push(writer);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'bulk' } } });
  });

  after(async () => {
    await pipeline.stop();
    await nc.close();
    await bed.stop();
  });

  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const list = async () =>
    (
      (await custom().listNamespacedCustomObject({ ...target, namespace: 'bulk' })) as {
        items: Cluster[];
      }
    ).items;
  const patchesApplied = async () => {
    let total = 0;
    for (const w of writers)
      total += await w.metric('kubebus_status_patches_total', { result: 'applied' }).catch(() => 0);
    return total;
  };

  it('converges 200 clusters and half of them updated, with at most one status patch per generation', async () => {
    const names = Array.from({ length: COUNT }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(
        names.slice(i, i + 20).map((name) =>
          custom().createNamespacedCustomObject({
            ...target,
            namespace: 'bulk',
            body: {
              apiVersion: `${target.group}/${target.version}`,
              kind: 'DatabaseCluster',
              metadata: { name },
              spec: { engine: 'postgres', version: '16', replicas: 1, storage: { size: '1Gi' } },
            },
          }),
        ),
      );
    }
    // Half of them change while the writer is killed and replaced mid-stream.
    const updating = (async () => {
      for (const name of names.filter((_, i) => i % 2 === 0)) {
        await custom().patchNamespacedCustomObject(
          { ...target, namespace: 'bulk', name, body: { spec: { replicas: 2 } } },
          mergePatch,
        );
      }
    })();
    await waitFor(async () => (await patchesApplied()) >= 20, 'the writer to be patching');
    const appliedBeforeKill = await patchesApplied();
    await writer.kill();
    pipeline.forget(writer);
    writers.splice(0);
    writer = await pipeline.statusWriter();
    writers.push(writer);
    await updating;

    let clusters: Cluster[] = [];
    await waitFor(
      async () => {
        clusters = await list();
        return (
          clusters.length === COUNT &&
          clusters.every((c) => c.status?.observedGeneration === c.metadata.generation)
        );
      },
      'every cluster to report its current generation',
      300_000,
    );
    for (const cluster of clusters) {
      const ready = cluster.status?.conditions?.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'False', cluster.metadata.name);
      assert.equal(ready?.reason, 'WaitingForReplicas', cluster.metadata.name);
      assert.equal(cluster.status?.phase, 'Provisioning');
    }
    const generations = clusters.reduce((sum, c) => sum + c.metadata.generation, 0);
    assert.equal(generations, COUNT + COUNT / 2);
    const patches = appliedBeforeKill + (await patchesApplied());
    process.stdout.write(
      `# ${COUNT} clusters, ${generations} generations, ${patches} status patches\n`,
    );
    assert.ok(patches <= generations, `${patches} patches for ${generations} generations`);
    // (whether the writer itself skips a no-op here depends on timing: the
    // reconciler already leaves out an intent whose status is in place; the
    // writer's no-op rule is unit-tested in status-applier.test.ts)
    // consumer lag per partition, from the replica holding it: every partition is
    // held by one of the two reconcilers, and all work is done
    const lagSeries = async () => {
      const series: { consumer: string; value: number }[] = [];
      for (const reconciler of pipeline.services.filter((p) => p.name.startsWith('reconciler')))
        for (const match of (await reconciler.get('/metrics')).body.matchAll(
          /^kubebus_consumer_pending\{stream="KUBEBUS_WORK",consumer="(databasecluster_p\d+)"\} (\d+)$/gm,
        ))
          series.push({ consumer: match[1] ?? '', value: Number(match[2]) });
      return series;
    };
    await waitFor(async () => {
      const series = await lagSeries();
      return (
        new Set(series.map((s) => s.consumer)).size === Number(PARTITIONS) &&
        series.every((s) => s.value === 0)
      );
    }, 'a zero pending gauge for every partition');
  });

  it('never lets an older intent overwrite a newer status', async () => {
    const [cluster] = (await list()).filter((c) => c.metadata.generation === 2);
    assert.ok(cluster);
    const before = (await custom().getNamespacedCustomObject({
      ...target,
      namespace: 'bulk',
      name: cluster.metadata.name,
    })) as Cluster;
    const staleBefore = await writer.metric('kubebus_status_skipped_total', { reason: 'stale' });
    await new StatusPublisher(jetstream(nc), 'databasecluster', Number(STATUS_PARTITIONS)).publish({
      key: {
        group: target.group,
        resource: target.plural,
        namespace: 'bulk',
        name: cluster.metadata.name,
      },
      apiVersion: cluster.apiVersion,
      kind: cluster.kind,
      uid: cluster.metadata.uid,
      observedGeneration: 1,
      status: { phase: 'Failed' },
    });
    await waitFor(
      async () =>
        (await writer.metric('kubebus_status_skipped_total', { reason: 'stale' })) > staleBefore,
      'the stale intent to be dropped',
    );
    const after = (await custom().getNamespacedCustomObject({
      ...target,
      namespace: 'bulk',
      name: cluster.metadata.name,
    })) as Cluster;
    assert.deepEqual(after.status, before.status);
  });

  it('drops intents for objects that no longer exist and parks rejected patches in the DLQ', async () => {
    const publisher = new StatusPublisher(
      jetstream(nc),
      'databasecluster',
      Number(STATUS_PARTITIONS),
    );
    const goneBefore = await writer.metric('kubebus_status_skipped_total', { reason: 'gone' });
    await publisher.publish({
      key: {
        group: target.group,
        resource: target.plural,
        namespace: 'bulk',
        name: 'never-existed',
      },
      apiVersion: `${target.group}/${target.version}`,
      kind: 'DatabaseCluster',
      uid: 'no-such-uid',
      observedGeneration: 1,
      status: { phase: 'Ready' },
    });
    await waitFor(
      async () =>
        (await writer.metric('kubebus_status_skipped_total', { reason: 'gone' })) > goneBefore,
      'the intent for a missing object to be dropped',
    );

    const [cluster] = await list();
    assert.ok(cluster);
    await publisher.publish({
      key: {
        group: target.group,
        resource: target.plural,
        namespace: 'bulk',
        name: cluster.metadata.name,
      },
      apiVersion: cluster.apiVersion,
      kind: cluster.kind,
      uid: cluster.metadata.uid,
      observedGeneration: cluster.metadata.generation,
      status: { phase: 'Exploded' }, // not in the CRD's enum: the apiserver answers 422
    });
    let letters: ReturnType<typeof DeadLetterSchema.parse>[] = [];
    await waitFor(async () => {
      letters = (
        await readStream(nc, Streams.deadLetters, 'kubebus.dlq.databasecluster_status-writer.>')
      ).map((m) => DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(m.data))));
      return letters.some((l) => l.key.name === cluster.metadata.name);
    }, 'the rejected patch in the DLQ');
    const letter = letters.find((l) => l.key.name === cluster.metadata.name);
    assert.match(letter?.reason ?? '', /422|Unsupported value|phase/);
    assert.equal(
      (
        (await custom().getNamespacedCustomObject({
          ...target,
          namespace: 'bulk',
          name: cluster.metadata.name,
        })) as Cluster
      ).status?.phase,
      'Provisioning',
    );
  });

  it('carries one trace id from the watcher through the reconciler to the status writer', async () => {
    const traceOf = (line: Record<string, unknown>) =>
      typeof line['traceparent'] === 'string' ? line['traceparent'].split('-')[1] : undefined;
    // every update the watcher published of bulk-001, as trace ids
    const publishedUpdates = () =>
      pipeline.services
        .filter((s) => s.name.startsWith('watcher'))
        .flatMap((s) => s.logs())
        .filter(
          (l) =>
            l['msg'] === 'publishing change' &&
            l['resource'] === 'databaseclusters' &&
            l['name'] === 'bulk-001' &&
            l['op'] === 'update',
        )
        .map(traceOf)
        .filter((id): id is string => id !== undefined);
    const earlier = new Set(publishedUpdates());
    await custom().patchNamespacedCustomObject(
      { ...target, namespace: 'bulk', name: 'bulk-001', body: { spec: { replicas: 3 } } },
      mergePatch,
    );
    const inLogs = (prefix: string, id: string) =>
      pipeline.services
        .filter((s) => s.name.startsWith(prefix))
        .some((s) => s.logs().some((l) => traceOf(l) === id));
    let traceId: string | undefined;
    // the spec change's own event: later ones (the status write's) may rightly
    // end without a status intent, the status being in place already
    await waitFor(async () => {
      traceId = publishedUpdates().find(
        (id) => !earlier.has(id) && inLogs('reconciler', id) && inLogs('status-writer', id),
      );
      return Promise.resolve(traceId !== undefined);
    }, 'the trace id in all three services');
    assert.match(traceId ?? '', /^[0-9a-f]{32}$/);
  });
});
