// Reconcilers scale out with no leader: three replicas share the partitions of
// the work stream, never reconcile one object twice at once, coalesce bursts,
// and take over the partitions of a replica that is killed.
import { Buckets } from '@kubebus/shared/bus';
import {
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { PARTITIONS, Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import type { ServiceProcess } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** The replica killed mid-reconcile: its id is what its leases hold. */
const VICTIM = 'reconciler-victim';

interface Cluster {
  metadata: { name: string; uid: string; generation: number };
  status?: { observedGeneration?: number };
}

interface Interval {
  readonly replica: string;
  readonly start: number;
  readonly end: number;
}

/** Every reconcile of `name`, as [start, end] from the replicas' own logs. */
function reconcilesOf(replicas: readonly ServiceProcess[], name: string): Interval[] {
  const intervals: Interval[] = [];
  for (const replica of replicas) {
    const starts = new Map<string, number>();
    for (const line of replica.logs()) {
      if (line['name'] !== name || typeof line['reconcileID'] !== 'string') continue;
      const at = Date.parse(String(line['time']));
      if (line['msg'] === 'reconcile started') starts.set(line['reconcileID'], at);
      if (line['msg'] === 'reconcile finished') {
        intervals.push({
          replica: replica.name,
          start: starts.get(line['reconcileID']) ?? at,
          end: at,
        });
      }
    }
  }
  return intervals.sort((a, b) => a.start - b.start || a.end - b.end);
}

describe('reconciler scale-out', { timeout: 900_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let pipeline: Pipeline;
  let replicas: ServiceProcess[];

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher();
    await pipeline.statusWriter();
    replicas = [
      await pipeline.reconciler({ KUBEBUS_REPLICA_ID: VICTIM }),
      await pipeline.reconciler(),
      await pipeline.reconciler(),
    ];
    await core().createNamespace({ body: { metadata: { name: 'fleet' } } });
  });

  after(async () => {
    await pipeline.stop();
    await nc.close();
    await bed.stop();
  });

  const core = () => bed.kubeConfig().makeApiClient(CoreV1Api);
  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const read = (name: string) =>
    custom().getNamespacedCustomObject({ ...target, namespace: 'fleet', name }) as Promise<Cluster>;
  const create = (name: string) =>
    custom().createNamespacedCustomObject({
      ...target,
      namespace: 'fleet',
      body: {
        apiVersion: `${target.group}/${target.version}`,
        kind: 'DatabaseCluster',
        metadata: { name },
        spec: {
          engine: 'postgres',
          version: '17',
          storage: { size: '1Gi' },
          backup: { schedule: '0 1 * * *', retentionDays: 1 },
        },
      },
    }) as Promise<Cluster>;
  const converged = async (name: string) => {
    const cluster = await read(name);
    return cluster.status?.observedGeneration === cluster.metadata.generation;
  };
  const leaseHolders = async () => {
    const kv = await new Kvm(nc).open(Buckets.leases);
    const holders = new Map<string, string>();
    for await (const key of await kv.keys('databasecluster.work.lease.*')) {
      const entry = await kv.get(key);
      if (entry?.operation === 'PUT') holders.set(key, entry.string());
    }
    return holders;
  };

  it('spreads the partitions over the replicas', async () => {
    await waitFor(async () => {
      const holders = await leaseHolders();
      return holders.size === Number(PARTITIONS) && new Set(holders.values()).size === 3;
    }, 'every partition to be held, by all three replicas');
  });

  it('never overlaps reconciles of a hot object, coalesces the burst and converges to the last spec', async () => {
    await create('hot');
    await waitFor(() => converged('hot'), 'the hot cluster');
    const updates = 60;
    const before = reconcilesOf(replicas, 'hot').length;
    // The whole burst while every replica is busy (frozen): the marks pile up in the work
    // stream, which keeps one per object — latest wins — whatever the machine's speed.
    for (const replica of replicas) replica.signal('SIGSTOP');
    try {
      await Promise.all(
        Array.from({ length: updates }, (_, i) =>
          custom().patchNamespacedCustomObject(
            {
              ...target,
              namespace: 'fleet',
              name: 'hot',
              body: { spec: { backup: { schedule: '0 1 * * *', retentionDays: i + 2 } } },
            },
            mergePatch,
          ),
        ),
      );
    } finally {
      for (const replica of replicas) replica.signal('SIGCONT');
    }
    const last = (await read('hot')) as Cluster & { spec: { backup: { retentionDays: number } } };
    assert.equal(last.metadata.generation, updates + 1, 'every update was a new generation');
    await waitFor(async () => {
      const config = await core().readNamespacedConfigMap({
        name: 'hot-config',
        namespace: 'fleet',
      });
      return (
        config.data?.['backup-retention-days'] === String(last.spec.backup.retentionDays) &&
        (await converged('hot'))
      );
    }, 'the last spec to be applied');

    const intervals = reconcilesOf(replicas, 'hot');
    for (let i = 1; i < intervals.length; i++) {
      const previous = intervals[i - 1];
      const current = intervals[i];
      assert.ok(previous && current);
      assert.ok(
        current.start >= previous.end,
        `reconciles overlap: ${JSON.stringify(previous)} and ${JSON.stringify(current)}`,
      );
    }
    const after = intervals.length - before;
    process.stdout.write(`# hot object: ${updates} updates, ${after} reconciles\n`);
    // the pending mark, the one a replica may have held when it froze, and the no-op
    // reconciles the status writes bring: a handful, not sixty
    assert.ok(after <= 6, `${after} reconciles for ${updates} updates`);
  });

  it('moves the partitions of a replica killed mid-reconcile; everything converges, no bucket twice', async () => {
    const names = Array.from({ length: 24 }, (_, i) => `db-${i}`);
    const creating = Promise.all(names.map((name) => create(name)));
    const victim = replicas[0];
    assert.ok(victim);
    assert.ok(
      [...(await leaseHolders()).values()].includes(VICTIM),
      'the victim holds partitions before it is killed',
    );
    await waitFor(
      () =>
        victim
          .logs()
          .some(
            (line) => line['msg'] === 'reconcile started' && String(line['name']).startsWith('db-'),
          ),
      'the victim to be reconciling',
    );
    await victim.kill();
    pipeline.forget(victim);
    const created = await creating;

    await waitFor(
      async () => {
        const holders = await leaseHolders();
        return holders.size === Number(PARTITIONS) && ![...holders.values()].includes(VICTIM);
      },
      'the survivors to take over every partition',
      60_000,
    );
    await waitFor(
      async () => (await Promise.all(names.map((name) => converged(name)))).every(Boolean),
      'every cluster to converge',
      120_000,
    );

    const jsm = await jetstreamManager(nc);
    const events = await bed
      .kubeConfig()
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace: 'fleet' });
    for (const cluster of created) {
      await jsm.streams.info(`OBJ_kubebus-backups-${cluster.metadata.uid}`);
      const bucketEvents = events.items.filter(
        (e) => e.reason === 'BucketCreated' && e.regarding?.uid === cluster.metadata.uid,
      );
      assert.ok(
        bucketEvents.length <= 1,
        `bucket of ${cluster.metadata.name} created ${bucketEvents.length} times`,
      );
    }
  });
});
