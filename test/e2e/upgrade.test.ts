// Upgrades reach every object: the reconcilers of an operator are replaced,
// one at a time, by a new version while objects keep coming, and every object
// ends up reconciled by the new version — the objects the old one had already
// reconciled too, without waiting for the periodic resync.
import { CoreV1Api } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TestBed } from '../bed/testbed.js';
import { installCrd, objects, widget, widgetCrd } from '../support/kube.js';
import { SWEPT } from '@kubebus/shared/bus';
import { reconciledBy } from '../support/reconciled-by.js';
import { ServiceProcess } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const operator = (release: string) =>
  fileURLToPath(new URL(`../support/operators/versioned-${release}.ts`, import.meta.url));
const NAMESPACE = 'upgrade';
const FAST = {
  KUBEBUS_ACK_WAIT: '5s',
  KUBEBUS_LEASE_RENEW: '1s',
  KUBEBUS_BACKOFF_BASE: '100ms',
  KUBEBUS_BACKOFF_CAP: '1s',
  KUBEBUS_STATUS_PARTITIONS: '4',
};

describe('an operator upgrade', { timeout: 600_000 }, () => {
  let bed: TestBed;
  const running: ServiceProcess[] = [];
  const start = async (
    role: 'watcher' | 'reconciler' | 'status-writer',
    release: string,
    id: string,
  ) => {
    const service = await ServiceProcess.start(
      bed,
      role,
      { ...FAST, KUBEBUS_REPLICA_ID: id, KUBEBUS_CURSOR_FLUSH: '200ms' },
      { operator: operator(release) },
    );
    running.push(service);
    return service;
  };

  before(async () => {
    bed = await TestBed.start();
    await installCrd(bed.kubeConfig(), widgetCrd);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  after(async () => {
    for (const service of running) await service.stop();
    await bed.stop();
  });

  /** The version that last reconciled each widget, from the ConfigMap it applied. */
  const versions = () => reconciledBy(bed.kubeConfig(), NAMESPACE);

  it('reconciles every object again with the new version during a rolling replacement', async () => {
    await start('watcher', 'v1', 'watcher');
    await start('status-writer', 'v1', 'status-writer');
    const old1 = await start('reconciler', 'v1', 'old-1');
    const old2 = await start('reconciler', 'v1', 'old-2');
    const api = objects(bed.kubeConfig());
    const names: string[] = [];
    const create = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const name = `w${names.length}`;
        names.push(name);
        await api.create(widget(name, { n: names.length }, NAMESPACE));
      }
    };
    await create(30);
    await waitFor(async () => {
      const seen = await versions();
      return names.every((name) => seen.get(name) === 'v1');
    }, 'the old version to reconcile every widget');

    // the rolling update: a new replica, then an old one goes; more objects arrive meanwhile
    const new1 = await start('reconciler', 'v2', 'new-1');
    await create(10);
    await old1.stop();
    running.splice(running.indexOf(old1), 1);
    await start('reconciler', 'v2', 'new-2');
    await create(10);
    await old2.stop();
    running.splice(running.indexOf(old2), 1);

    let seen = new Map<string, string>();
    await waitFor(
      async () => {
        seen = await versions();
        return names.every((name) => seen.get(name) === 'v2');
      },
      'the new version to reconcile every widget',
      180_000,
    );
    assert.equal(seen.size, names.length);
    // the sweep was the new version's: it marked the objects the old version had reconciled
    const sweeps = (replica: ServiceProcess) =>
      replica.logs().filter((line) => line['msg'] === SWEPT);
    assert.ok(sweeps(new1).length > 0, 'the new replica swept the partitions it took');

    // a restart of the same version sweeps nothing: its partitions are already swept by it
    const new3 = await start('reconciler', 'v2', 'new-3');
    for (const replica of running.filter((r) => r.name.startsWith('reconciler') && r !== new3)) {
      await replica.stop();
      running.splice(running.indexOf(replica), 1);
    }
    await create(1);
    await waitFor(
      async () => (await versions()).get(names.at(-1) ?? '') === 'v2',
      'the last widget, by the restarted replica',
    );
    assert.deepEqual(sweeps(new3), [], 'the same version swept again');
  });
});
