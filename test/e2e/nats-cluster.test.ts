// The pipeline on a three-node NATS cluster with R3 streams: it loses a node,
// then the work stream's leader, and every DatabaseCluster still converges,
// with nothing dead-lettered.
import { Streams } from '@kubebus/shared/bus';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const R3 = { KUBEBUS_STREAM_REPLICAS: '3' };

describe('on a three-node NATS cluster', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let pipeline: Pipeline;

  before(async () => {
    bed = await TestBed.start({ natsNodes: 3 });
    nc = await connect({ servers: bed.natsUrl.split(','), maxReconnectAttempts: -1 });
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher(R3);
    await pipeline.reconciler(R3);
    await pipeline.reconciler(R3);
    await pipeline.statusWriter(R3);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'ha' } } });
  });

  after(async () => {
    await pipeline.stop();
    await nc.close();
    await bed.stop();
  });

  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const createBatch = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      await custom().createNamespacedCustomObject({
        ...target,
        namespace: 'ha',
        body: {
          apiVersion: `${target.group}/${target.version}`,
          kind: 'DatabaseCluster',
          metadata: { name: `ha-${String(i).padStart(3, '0')}` },
          spec: { engine: 'postgres', version: '16', replicas: 1, storage: { size: '1Gi' } },
        },
      });
    }
  };
  const allConverged = async (count: number) => {
    const list = (await custom().listNamespacedCustomObject({ ...target, namespace: 'ha' })) as {
      items: {
        metadata: { generation: number };
        status?: { observedGeneration?: number; phase?: string };
      }[];
    };
    return (
      list.items.length === count &&
      list.items.every(
        (c) =>
          c.status?.observedGeneration === c.metadata.generation &&
          c.status.phase === 'Provisioning',
      )
    );
  };

  it('keeps its streams replicated three times', async () => {
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(Streams)) {
      assert.equal((await jsm.streams.info(stream)).config.num_replicas, 3, stream);
    }
  });

  it('converges through the loss of a node and then of the work stream leader', async () => {
    await createBatch(0, 20);
    const leader = await bed.streamLeader(Streams.work);
    const follower = (leader + 1) % 3;
    // New R3 buckets cannot be placed while a node is down: those reconciles
    // wait (transient), and finish once it is back.
    await bed.stopNatsNode(follower);
    await createBatch(20, 20);
    await bed.startNatsNode(follower);
    await waitFor(() => allConverged(40), 'convergence after losing a node', 180_000);

    const current = await bed.streamLeader(Streams.work);
    await bed.stopNatsNode(current);
    await createBatch(40, 20);
    await bed.startNatsNode(current);
    await waitFor(() => allConverged(60), 'convergence after losing the leader', 180_000);

    const jsm = await jetstreamManager(nc);
    assert.equal((await jsm.streams.info(Streams.deadLetters)).state.messages, 0, 'no dead letter');
  });
});
