// Changing an operator's partition count (8 to 4): refused while a process
// with the old count is alive; once every reconciler has stopped, the first
// one with the new count repartitions, and every object — the ones
// reconciled under the old count too — is reconciled again in its new
// partition, with the operator's version unchanged. A watcher left running
// with the old count loses no change, and stops (docs/operators.md, "Partitions").
import { CoreV1Api } from '@kubernetes/client-node';
import { Buckets, SWEPT, Streams, agreementKeys } from '@kubebus/shared/bus';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TestBed } from '../bed/testbed.js';
import { installCrd, objects, widget, widgetCrd } from '../support/kube.js';
import { reconciledBy } from '../support/reconciled-by.js';
import { ServiceProcess, kubebusArgs } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const operator = (file: string) =>
  fileURLToPath(new URL(`../support/operators/${file}.ts`, import.meta.url));
const EIGHT = operator('versioned-8-partitions');
const FOUR = operator('versioned-v1');
const NAMESPACE = 'repartition';
const ENV = {
  // one version for both modules: what sweeps again is the new count, not a new version
  KUBEBUS_OPERATOR_VERSION: 'same-version',
  KUBEBUS_ACK_WAIT: '5s',
  KUBEBUS_LEASE_RENEW: '1s',
  KUBEBUS_BACKOFF_BASE: '100ms',
  KUBEBUS_BACKOFF_CAP: '1s',
  KUBEBUS_CURSOR_FLUSH: '200ms',
};

describe('repartitioning an operator', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  const running: ServiceProcess[] = [];

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    await installCrd(bed.kubeConfig(), widgetCrd);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  after(async () => {
    for (const service of running) await service.stop();
    await nc?.close();
    await bed?.stop();
  });

  /** Who last reconciled each widget: the label of the ConfigMap it applied. */
  const reconciled = () => reconciledBy(bed.kubeConfig(), NAMESPACE);
  const registered = async () => {
    const kv = await new Kvm(nc).open(Buckets.agreements);
    const entry = await kv.get(agreementKeys.work('versioned'));
    return entry?.json<{ partitions: number; at: string }>();
  };

  it('refuses a new count while the old one runs, then moves every object to its new partition', async () => {
    const api = objects(bed.kubeConfig());
    const names = Array.from({ length: 24 }, (_, i) => `w${i}`);
    const eight = await ServiceProcess.start(bed, 'all', ENV, { operator: EIGHT });
    running.push(eight);
    for (const [i, name] of names.entries()) await api.create(widget(name, { n: i }, NAMESPACE));
    await waitFor(
      async () => {
        const seen = await reconciled();
        return names.every((name) => seen.get(name) === '8-partitions');
      },
      'the 8-partition operator to reconcile every widget',
      120_000,
    );
    assert.equal((await registered())?.partitions, 8);

    // a reconciler with 4 while the 8-partition process is alive: one line, and nothing changes
    const refused = await run(process.execPath, kubebusArgs('run', FOUR, '--role', 'reconciler'), {
      env: {
        ...process.env,
        ...ENV,
        KUBECONFIG: bed.kubeconfigPath,
        KUBEBUS_NATS_URL: bed.natsUrl,
        KUBEBUS_HEALTH_PORT: '0',
        KUBEBUS_REPLICA_ID: 'four-early',
      },
      timeout: 120_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    assert.ok(refused, 'a reconciler with 4 partitions started beside one with 8');
    assert.equal(refused.code, 2, refused.stderr);
    const lines = (refused.stderr ?? '').trim().split('\n');
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(
      lines[0] ?? '',
      /versioned\.work is split into 8 partitions .* says 4, and \d+ of its processes are alive/,
    );
    assert.equal((await registered())?.partitions, 8, 'the refused process changed the count');

    // an extra watcher with the old count outlives the rest (it holds no lease: nothing sees it)
    // (it saves its cursors every 20 s: until then it goes on marking the new changes)
    const oldWatcher = await ServiceProcess.start(
      bed,
      'watcher',
      { ...ENV, KUBEBUS_CURSOR_FLUSH: '20s' },
      { operator: EIGHT },
    );
    running.push(oldWatcher);
    await eight.stop();
    running.splice(running.indexOf(eight), 1);
    // a count registered moments ago might belong to a process still starting
    await waitFor(
      async () => Date.now() - Date.parse((await registered())?.at ?? '') > 16_000,
      'the 8-partition registration to be older than a lease TTL',
      60_000,
    );

    const four = await ServiceProcess.start(bed, 'all', ENV, { operator: FOUR });
    running.push(four);
    assert.equal((await registered())?.partitions, 4);
    assert.ok(
      four.logs().some((line) => String(line['msg']).startsWith('repartitioning')),
      'no repartitioning logged',
    );
    await waitFor(
      async () => {
        const seen = await reconciled();
        return names.every((name) => seen.get(name) === 'v1');
      },
      'every widget reconciled again after the repartition (same operator version)',
      180_000,
    );
    const sweeps = four.logs().filter((line) => line['msg'] === SWEPT);
    assert.deepEqual(
      [...new Set(sweeps.map((line) => line['partition']))].sort(),
      [0, 1, 2, 3],
      'each of the 4 partitions swept',
    );

    // new objects: the old watcher marks half of them in partitions 4-7, which no one
    // consumes now; the new watcher's marks of the same changes still reach partitions 0-3
    const later = Array.from({ length: 16 }, (_, i) => `later${i}`);
    for (const [i, name] of later.entries()) await api.create(widget(name, { n: i }, NAMESPACE));
    await waitFor(
      async () => {
        const seen = await reconciled();
        return later.every((name) => seen.get(name) === 'v1');
      },
      'the widgets created after the repartition to be reconciled',
      120_000,
    );
    // and at its next cursor save the old watcher saw the repartition: no cursor saved, not live
    await waitFor(
      async () => (await oldWatcher.get('/healthz')).status !== 200,
      'the old-count watcher to report itself not live',
      90_000,
    );
    assert.ok(
      oldWatcher
        .logs()
        .some((line) => /was repartitioned into 4 partitions/.test(String(line['msg']))),
      'the old-count watcher did not say why it stopped',
    );

    // the topology step removes partitions 4-7 and the old watcher's marks pending there;
    // without it they would count as lag for ever
    const jsm = await jetstreamManager(nc);
    const pendingIn = async (partition: number) => {
      const info = await jsm.streams.info(Streams.work, {
        subjects_filter: `kubebus.work.versioned.p${partition}.>`,
      });
      return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
    };
    const consumerNames = async () => {
      const names: string[] = [];
      for await (const consumer of jsm.consumers.list(Streams.work)) names.push(consumer.name);
      return names.filter((name) => name.startsWith('versioned_')).sort();
    };
    let stranded = 0;
    for (const partition of [4, 5, 6, 7]) stranded += await pendingIn(partition);
    assert.ok(stranded > 0, 'the old-count watcher left no mark in partitions 4-7');
    assert.deepEqual(await consumerNames(), [
      'versioned_later',
      ...[0, 1, 2, 3, 4, 5, 6, 7].map((n) => `versioned_p${n}`),
    ]);
    const applied = await run(process.execPath, kubebusArgs('topology', 'apply', FOUR), {
      env: { ...process.env, ...ENV, KUBEBUS_NATS_URL: bed.natsUrl },
      timeout: 120_000,
    });
    for (const partition of [4, 5, 6, 7])
      assert.match(applied.stdout, new RegExp(`KUBEBUS_WORK/versioned_p${partition}\\s+removed`));
    // the waiting requeues' consumer is no partition: it stays
    assert.deepEqual(await consumerNames(), [
      'versioned_later',
      ...[0, 1, 2, 3].map((n) => `versioned_p${n}`),
    ]);
    for (const partition of [4, 5, 6, 7]) assert.equal(await pendingIn(partition), 0);
    // the live partitions are untouched, and the operator goes on
    await api.create(widget('after-topology', { n: 0 }, NAMESPACE));
    await waitFor(
      async () => (await reconciled()).get('after-topology') === 'v1',
      'a widget created after the topology step to be reconciled',
      60_000,
    );
  });
});
