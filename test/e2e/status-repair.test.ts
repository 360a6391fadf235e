// A reconciler leaves out a status intent the object already shows or that it
// published moments ago for the same generation (published-status.ts): a
// re-reconcile then costs the status writer no run. What must survive it: a
// status someone else writes is still put back, and every cluster converges.
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import type { ServiceProcess } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const NAMESPACE = 'repair';
const COUNT = 20;

interface Cluster {
  metadata: { name: string; generation: number; resourceVersion: string };
  status?: { observedGeneration?: number; phase?: string };
}

describe('status intents left out', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let pipeline: Pipeline;
  let writer: ServiceProcess;

  before(async () => {
    bed = await TestBed.start();
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher();
    await pipeline.reconciler();
    writer = await pipeline.statusWriter();
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  after(async () => {
    await pipeline.stop();
    await bed.stop();
  });

  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const get = async (name: string) =>
    (await custom().getNamespacedCustomObject({
      ...target,
      namespace: NAMESPACE,
      name,
    })) as Cluster;
  const converged = (cluster: Cluster) =>
    cluster.status?.observedGeneration === cluster.metadata.generation &&
    cluster.status.phase === 'Provisioning';

  it('converges every cluster, its re-reconciles costing the writer fewer runs than objects', async () => {
    const names = Array.from({ length: COUNT }, (_, i) => `db-${i}`);
    await Promise.all(
      names.map((name) =>
        custom().createNamespacedCustomObject({
          ...target,
          namespace: NAMESPACE,
          body: {
            apiVersion: `${target.group}/${target.version}`,
            kind: 'DatabaseCluster',
            metadata: { name },
            spec: { engine: 'postgres', version: '16', replicas: 1, storage: { size: '1Gi' } },
          },
        }),
      ),
    );
    await waitFor(
      async () => (await Promise.all(names.map(get))).every(converged),
      'every cluster to report generation 1',
      180_000,
    );
    // every cluster is reconciled at least twice (its create, its finalizer):
    // before intents were left out, about one writer run per cluster found nothing to do
    const noops = await writer
      .metric('kubebus_status_skipped_total', { reason: 'noop' })
      .catch(() => 0);
    const applied = await writer.metric('kubebus_status_patches_total', { result: 'applied' });
    assert.equal(applied, COUNT, 'one status patch per cluster');
    assert.ok(noops <= COUNT / 2, `${noops} writer runs found nothing to do`);
  });

  it('puts back a status someone else wrote', async () => {
    // the patch's answer shows the foreign status stored: polling for it could
    // miss it, the repair may come within the poll's interval
    const foreign = (await custom().patchNamespacedCustomObjectStatus(
      { ...target, namespace: NAMESPACE, name: 'db-0', body: { status: { phase: 'Failed' } } },
      mergePatch,
    )) as Cluster;
    assert.equal(foreign.status?.phase, 'Failed');
    await waitFor(
      async () => {
        const cluster = await get('db-0');
        // a later revision than the foreign write's, showing the status put back
        return (
          cluster.metadata.resourceVersion !== foreign.metadata.resourceVersion &&
          converged(cluster)
        );
      },
      'the status to be repaired',
      120_000,
    );
  });
});
