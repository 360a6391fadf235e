// A resource that grows a second version while its operator runs: release 1
// serves Gadget v1alpha1 only; release 2 adds v1, stores it and converts
// v1alpha1 through the webhook `kubebus run` serves over HTTPS. The real
// apiserver calls that webhook (the CRD points at the loopback server with
// the bed's CA as caBundle): objects created as v1alpha1 read as v1 and back,
// the upgrade loses no object and reconciles each in v1, and
// `kubebus storage migrate` leaves nothing stored in v1alpha1 — the CRD can
// then drop it. The webhook serves with NATS down, and before it is reached;
// `kubebus storage check` is the preflight; release 3 (v1 alone) replays
// only what the bus recorded in v1.
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { crdOf } from 'kubebus';
import { issueNatsCert, pem } from '../bed/pki.js';
import { freePort } from '../bed/ports.js';
import { TestBed } from '../bed/testbed.js';
import { installCrd } from '../support/kube.js';
import { Gadget, GadgetV1alpha1 } from '../support/operators/gadgets.js';
import { kubebusArgs, ServiceProcess } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const release = (n: number) =>
  fileURLToPath(new URL(`../support/operators/gadgets-release-${n}.ts`, import.meta.url));
const GROUP = 'test.kubebus.dev';
const NAMESPACE = 'gadgets';
const CRD = `gadgets.${GROUP}`;
const FAST = {
  KUBEBUS_ACK_WAIT: '5s',
  KUBEBUS_LEASE_RENEW: '1s',
  KUBEBUS_BACKOFF_BASE: '100ms',
  KUBEBUS_BACKOFF_CAP: '1s',
  KUBEBUS_STATUS_PARTITIONS: '4',
  KUBEBUS_CURSOR_FLUSH: '200ms',
};

interface GadgetObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

describe('a resource that grows a second version', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let custom: CustomObjectsApi;
  let crds: ApiextensionsV1Api;
  const running: ServiceProcess[] = [];
  const names: string[] = [];
  /** where release 2 serves the webhook the CRD names */
  let webhookEnv: Record<string, string> = {};

  const get = async (version: string, name: string) =>
    (await custom.getNamespacedCustomObject({
      group: GROUP,
      version,
      namespace: NAMESPACE,
      plural: 'gadgets',
      name,
    })) as GadgetObject;
  const list = async (version: string) =>
    (
      (await custom.listNamespacedCustomObject({
        group: GROUP,
        version,
        namespace: NAMESPACE,
        plural: 'gadgets',
      })) as { items: GadgetObject[] }
    ).items;
  const create = async (version: string, name: string, spec: Record<string, unknown>) => {
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version,
      namespace: NAMESPACE,
      plural: 'gadgets',
      body: { apiVersion: `${GROUP}/${version}`, kind: 'Gadget', metadata: { name }, spec },
    });
    names.push(name);
  };
  /** which release last reconciled each gadget, and what it applied */
  const configMaps = async () => {
    const items = (
      await bed.kubeConfig().makeApiClient(CoreV1Api).listNamespacedConfigMap({
        namespace: NAMESPACE,
        labelSelector: 'reconciled-by',
      })
    ).items;
    return new Map(
      items.map((cm) => [
        (cm.metadata?.name ?? '').replace(/-gadget$/, ''),
        { by: cm.metadata?.labels?.['reconciled-by'], target: cm.data?.['target'] },
      ]),
    );
  };
  /** kubectl apply of a new CRD over the installed one */
  const replaceCrd = async (next: ReturnType<typeof crdOf>) => {
    const current = await crds.readCustomResourceDefinition({ name: CRD });
    const body = {
      ...next,
      metadata: { ...next.metadata, resourceVersion: current.metadata?.resourceVersion ?? '' },
    };
    await crds.replaceCustomResourceDefinition({
      name: CRD,
      body,
    });
  };
  const portOf = (name: string) => 1000 + Number(name.replace(/\D/g, ''));
  /** release 2 with its webhook where the CRD names it; not waited for (its webhook serves first) */
  const startRelease2 = async () => {
    const started = await ServiceProcess.start(
      bed,
      'all',
      { ...FAST, ...webhookEnv },
      { operator: release(2), waitReady: false },
    );
    running.push(started);
    return started;
  };
  /** the kubebus CLI against the bed's apiserver */
  const kubebus = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        kubebusArgs(...args),
        {
          env: { ...process.env, KUBECONFIG: bed.kubeconfigPath, KUBEBUS_NATS_URL: bed.natsUrl },
          timeout: 120_000,
        },
        (error, stdout, stderr) => {
          resolve({ code: error === null ? 0 : Number(error.code ?? -1), stdout, stderr });
        },
      );
    });

  before(async () => {
    bed = await TestBed.start();
    custom = bed.kubeConfig().makeApiClient(CustomObjectsApi);
    crds = bed.kubeConfig().makeApiClient(ApiextensionsV1Api);
    await installCrd(bed.kubeConfig(), crdOf(GadgetV1alpha1));
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  after(async () => {
    for (const service of running) await service.stop();
    await bed.stop();
  });

  it('release 1 reconciles gadgets created as v1alpha1', async () => {
    running.push(await ServiceProcess.start(bed, 'all', FAST, { operator: release(1) }));
    for (let i = 0; i < 20; i++)
      await create('v1alpha1', `g${i}`, { host: `h${i}.example`, port: portOf(`g${i}`) });
    await waitFor(
      async () => {
        const seen = await configMaps();
        return names.every((name) => seen.get(name)?.by === 'release-1');
      },
      'release 1 to reconcile every gadget',
      120_000,
    );
  });

  it('release 2 takes over while objects keep coming: none lost, each reconciled in v1', async () => {
    const cert = await issueNatsCert(bed.pki, 'conversion-webhook');
    const port = await freePort();
    // the rolling update: the new release starts (its webhook first), the CRD follows, the old one goes
    webhookEnv = {
      KUBEBUS_WEBHOOK_HOST: '127.0.0.1',
      KUBEBUS_WEBHOOK_PORT: String(port),
      KUBEBUS_WEBHOOK_CERT: cert.cert,
      KUBEBUS_WEBHOOK_KEY: cert.key,
    };
    const next = await startRelease2();
    // the preflight: release 2 takes every object stored in v1alpha1
    const check = await kubebus('storage', 'check', release(2));
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(
      check.stdout,
      /stored in v1alpha1; 20 objects \(listed as v1alpha1\): each converts to every version of this release \(v1alpha1, v1\) and back\n$/,
    );
    await replaceCrd(
      crdOf(Gadget, {
        url: `https://127.0.0.1:${port}/convert`,
        caBundle: Buffer.from(pem(bed.pki.caCert)).toString('base64'),
      }),
    );
    await waitFor(async () => (await list('v1')).length === names.length, 'v1 to be served');
    await next.waitReady();
    for (let i = 20; i < 25; i++)
      await create('v1alpha1', `g${i}`, { host: `h${i}.example`, port: portOf(`g${i}`) });
    const old = running.shift();
    await old?.stop();
    for (let i = 25; i < 30; i++)
      await create('v1', `g${i}`, { endpoint: { host: `h${i}.example`, port: portOf(`g${i}`) } });

    let seen = new Map<string, { by: string | undefined; target: string | undefined }>();
    await waitFor(
      async () => {
        seen = await configMaps();
        return names.every((name) => seen.get(name)?.by === 'release-2');
      },
      'release 2 to reconcile every gadget',
      180_000,
    );
    for (const name of names)
      assert.equal(seen.get(name)?.target, `${name.replace('g', 'h')}.example:${portOf(name)}`);
    // every object, read in the new version, says what the old one said, and has release 2's status
    await waitFor(
      async () =>
        (await list('v1')).every(
          (gadget) =>
            gadget.status?.['address'] ===
            `${gadget.metadata.name.replace('g', 'h')}.example:${portOf(gadget.metadata.name)}`,
        ),
      'every gadget to show its v1 status',
      60_000,
    );
    const stored = await list('v1');
    assert.deepEqual(stored.map((gadget) => gadget.metadata.name).sort(), [...names].sort());
    for (const gadget of stored)
      assert.deepEqual(gadget.spec, {
        endpoint: {
          host: `${gadget.metadata.name.replace('g', 'h')}.example`,
          port: portOf(gadget.metadata.name),
        },
      });
  });

  it('reads an object created as v1alpha1 as v1 and back, through the webhook', async () => {
    await create('v1alpha1', 'g100', { host: 'round.example', port: 8080 });
    const asV1 = await get('v1', 'g100');
    assert.deepEqual(asV1.spec, { endpoint: { host: 'round.example', port: 8080 } });
    const asV1alpha1 = await get('v1alpha1', 'g100');
    assert.deepEqual(asV1alpha1.spec, { host: 'round.example', port: 8080 });
    // the status release 2 writes in v1 reads as v1alpha1's url
    await waitFor(
      async () => (await get('v1alpha1', 'g100')).status?.['url'] === 'http://round.example:8080',
      'the v1 status to read as a v1alpha1 url',
    );
    // and a default of the old version's schema survives the trip
    await create('v1alpha1', 'g101', { host: 'default.example' });
    assert.deepEqual((await get('v1', 'g101')).spec, {
      endpoint: { host: 'default.example', port: 80 },
    });
  });

  it('converts without NATS: from a reconciler started before it, and one that lost it', async () => {
    const readsAsV1alpha1 = async () => {
      try {
        return (await get('v1alpha1', 'g100')).spec['host'] === 'round.example';
      } catch {
        return false;
      }
    };
    await running.pop()?.stop();
    await bed.stopNats('kill');
    // the webhook before the bus: a pod that starts in an outage serves conversions
    const next = await startRelease2();
    await waitFor(readsAsV1alpha1, 'a conversion by a reconciler waiting for NATS');
    assert.equal((await next.get('/readyz')).status, 503, 'not ready before it reached NATS');
    await bed.startNats();
    await next.waitReady();

    // NATS lost later: still ready (the webhook's Service keeps it), and converting (ADR 0036)
    await bed.stopNats('kill');
    const connected = async () =>
      /^kubebus_nats_connected (\d)$/m.exec((await next.get('/metrics')).body)?.[1];
    await waitFor(async () => (await connected()) === '0', 'the reconciler to see NATS gone');
    assert.equal((await next.get('/readyz')).status, 200);
    assert.ok(await readsAsV1alpha1(), 'a conversion while NATS is down');
    assert.equal((await list('v1alpha1')).length, names.length);
    await bed.startNats();
    await waitFor(async () => (await connected()) === '1', 'the reconciler to reconnect');
  });

  it('storage migrate rewrites every object in v1: v1alpha1 can then leave the CRD', async () => {
    const before = await crds.readCustomResourceDefinition({ name: CRD });
    assert.deepEqual([...(before.status?.storedVersions ?? [])].sort(), ['v1', 'v1alpha1']);
    const result = await kubebus('storage', 'migrate', release(2));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`${names.length} objects rewritten in v1`));
    const after = await crds.readCustomResourceDefinition({ name: CRD });
    assert.deepEqual(after.status?.storedVersions, ['v1']);

    // v1alpha1 gone from the CRD: an object still stored in it could no longer be read
    await replaceCrd(
      crdOf({ ...Gadget, versions: Gadget.versions.filter((version) => version.storage) }),
    );
    await waitFor(async () => {
      try {
        await get('v1alpha1', 'g0');
        return false;
      } catch {
        return true;
      }
    }, 'v1alpha1 to stop being served');
    // the apiserver re-initializes the resource's storage after the CRD change
    let all: GadgetObject[] = [];
    await waitFor(async () => {
      all = await list('v1');
      return true;
    }, 'v1 to be listed again');
    assert.equal(all.length, names.length);
    for (const gadget of all) assert.ok('endpoint' in gadget.spec, gadget.metadata.name);
    // a rollback to release 1 could read none of them: the preflight says so
    const rollback = await kubebus('storage', 'check', release(1));
    assert.equal(rollback.code, 1, rollback.stdout + rollback.stderr);
    assert.match(rollback.stdout, /stored in v1, which this release does not define/);

    // release 3 (v1 alone) replays g0's history: what was recorded as v1alpha1 it does not
    // replay (it would read today's object instead), what was recorded as v1 it does
    const replayed = await kubebus('replay', release(3), `${NAMESPACE}/g0`);
    assert.equal(replayed.code, 0, replayed.stdout + replayed.stderr);
    assert.match(
      replayed.stdout,
      /recorded as test\.kubebus\.dev\/v1alpha1, a version this release does not define \(it has v1\): not replayed/,
    );
    assert.match(replayed.stdout, /status same as recorded/);
  });
});
