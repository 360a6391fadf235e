// kubebus's REST client on a real kube-apiserver: one connection carries
// every request and watch (HTTP/2), however many run at once — no TLS
// handshake per request — and it survives the apiserver restarting.
import { classifyFailure } from '@kubebus/shared/errors';
import {
  KubeClient,
  apply,
  listPages,
  loadKubeConfig,
  watchEvents,
  type ApplyBody,
} from '@kubebus/shared/kube';
import { restClientMetrics } from '@kubebus/shared/obs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { TestBed } from '../bed/testbed.js';

describe('REST client connections', { timeout: 300_000 }, () => {
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start();
  });
  after(async () => {
    await bed.stop();
  });

  async function client() {
    const registry = new Registry();
    const metrics = restClientMetrics(registry);
    const kube = new KubeClient(await loadKubeConfig(bed.kubeconfigPath), metrics);
    const connections = async () =>
      (
        await registry.getSingleMetric('kubebus_rest_client_connections_total')?.get()
      )?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;
    return { kube, connections };
  }

  it('sends 200 requests, 50 at a time, and a watch over one connection', async () => {
    const { kube, connections } = await client();
    const abort = new AbortController();
    const watching = (async () => {
      let events = 0;
      try {
        for await (const event of watchEvents(
          kube,
          { resource: { group: '', version: 'v1', resource: 'configmaps', namespaced: true } },
          { resourceVersion: '0', inactivityMs: 60_000, timeoutSeconds: 60, signal: abort.signal },
        ))
          if (event.type === 'ADDED') events++;
      } catch {
        // aborted at the end
      }
      return events;
    })();
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          kube.request('/api/v1/namespaces/default/configmaps', {
            method: 'POST',
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${round}-${i}` } },
          }),
        ),
      );
    }
    abort.abort();
    assert.ok((await watching) >= 1, 'the watch saw the ConfigMaps');
    assert.equal(await connections(), 1, 'one connection for everything');
    kube.close();
  });

  it("takes a body the apiserver's types cannot hold as the object's fault, not an outage", async () => {
    const { kube } = await client();
    const refusal = async (resource: string, body: ApplyBody) => {
      const ref = { group: '', version: 'v1', resource, namespaced: true };
      const error: unknown = await apply(kube, ref, body, { fieldManager: 'test' }).then(
        () => assert.fail(`${resource}: applied`),
        (e: unknown) => e,
      );
      return { error, message: error instanceof Error ? error.message : String(error) };
    };
    // a quantity its type cannot parse: a 500 from the conversion, on every try
    const quota = await refusal('resourcequotas', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'tenant-quota', namespace: 'default' },
      spec: { hard: { cpu: 'lots' } },
    });
    assert.match(quota.message, /500|convert/, quota.message);
    assert.equal(classifyFailure(quota.error), 'object', quota.message);
    // a field its schema does not declare (client-node's `_default`)
    const limits = await refusal('limitranges', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limits', namespace: 'default' },
      spec: { limits: [{ type: 'Container', _default: { cpu: '1' } }] },
    });
    assert.equal(classifyFailure(limits.error), 'object', limits.message);
  });

  it('lists and watches metadata only: no byte of a Secret reaches the client', async () => {
    const { kube } = await client();
    const secrets = { group: '', version: 'v1', resource: 'secrets', namespaced: true };
    const secret = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'default' },
      type: 'Opaque',
      stringData: { password: 'never-listed' },
    });
    await kube.request('/api/v1/namespaces/default/secrets', {
      method: 'POST',
      body: secret('listed'),
    });
    const scope = { resource: secrets, namespace: 'default', metadataOnly: { kind: 'Secret' } };
    let resourceVersion = '';
    const listed = [];
    for await (const page of listPages(kube, scope)) {
      listed.push(...page.items);
      resourceVersion = page.resourceVersion;
    }
    const item = listed.find((s) => s.metadata.name === 'listed');
    assert.ok(item);
    assert.equal(item.kind, 'Secret');
    assert.equal(item.apiVersion, 'v1');
    assert.equal(item['type'], undefined);
    assert.equal(item['data'], undefined);

    const abort = new AbortController();
    const watched = (async () => {
      for await (const event of watchEvents(kube, scope, {
        resourceVersion,
        inactivityMs: 60_000,
        timeoutSeconds: 60,
        signal: abort.signal,
      }))
        if ('object' in event && event.object.metadata.name === 'watched') return event.object;
      return undefined;
    })();
    await kube.request('/api/v1/namespaces/default/secrets', {
      method: 'POST',
      body: secret('watched'),
    });
    const object = await watched;
    abort.abort();
    assert.ok(object);
    assert.equal(object.kind, 'Secret');
    assert.equal(object['data'], undefined);
    assert.doesNotMatch(JSON.stringify(object), /never-listed|bmV2ZXItbGlzdGVk/);
  });

  it('opens a new connection after the apiserver restarts, and only one', async () => {
    const { kube, connections } = await client();
    await kube.request('/api/v1/namespaces/default');
    await bed.restartApiserver();
    let answered = false;
    for (let i = 0; i < 60 && !answered; i++) {
      answered = await kube.request('/api/v1/namespaces/default').then(
        () => true,
        async () => {
          await new Promise((r) => setTimeout(r, 500));
          return false;
        },
      );
    }
    assert.ok(answered, 'answers again after the restart');
    for (let i = 0; i < 20; i++) await kube.request('/api/v1/namespaces/default');
    assert.equal(await connections(), 2);
    kube.close();
  });
});
