// The reconciler behind Knative with no watcher: it takes events exactly as
// Knative's ApiServerSource adapter sends them and reconciles what they name,
// reading what the stream does not record from the apiserver.
//
// The events are built the way knative.dev/eventing v0.45.0 builds them in
// pkg/adapter/apiserver/events/events.go (makeEvent, getRef, createSelfLink)
// and sends them: the CloudEvents Go SDK's HTTP binding, binary mode, with an
// id (a UUID) and time set by its client (client.WithUUIDs, WithTimeNow).
import { DeadLetterSchema, Streams, readMessages } from '@kubebus/shared/bus';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../bed/ports.js';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const NAMESPACE = 'kn';

interface Meta {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** The POST Knative's adapter makes for one watched object. */
function knativeRequest(
  source: string,
  mode: 'resource' | 'ref',
  op: 'add' | 'update' | 'delete',
  object: Meta,
): RequestInit {
  const { apiVersion, kind } = object;
  const { name, namespace = '' } = object.metadata;
  // createSelfLink: a guessed lower-case plural, "/apis/" even for the core group
  const subject = `/apis/${apiVersion}/namespaces/${namespace}/${kind.toLowerCase()}s/${name}`;
  const data = mode === 'ref' ? { kind, namespace, name, apiVersion } : object;
  return {
    method: 'POST',
    headers: {
      'ce-specversion': '1.0',
      'ce-id': randomUUID(),
      'ce-source': source,
      'ce-type': `dev.knative.apiserver.${mode}.${op}`,
      'ce-subject': subject,
      'ce-time': new Date().toISOString(),
      'ce-kind': kind,
      'ce-apiversion': apiVersion,
      'ce-name': name,
      'ce-namespace': namespace,
      'content-type': 'application/json',
    },
    body: JSON.stringify(data),
  };
}

describe("Knative's ApiServerSource events, with no watcher", { timeout: 300_000 }, () => {
  let bed: TestBed;
  let pipeline: Pipeline;
  let sink: string;
  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const apps = () => bed.kubeConfig().makeApiClient(AppsV1Api);

  before(async () => {
    bed = await TestBed.start();
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    const port = await freePort();
    await pipeline.reconciler({
      KUBEBUS_CONSUME: 'false',
      KUBEBUS_HTTP_PORT: String(port),
    });
    sink = `http://127.0.0.1:${port}/`;
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  after(async () => {
    await pipeline.stop();
    await bed.stop();
  });

  const cluster = async (name: string) =>
    (await custom().getNamespacedCustomObject({
      ...target,
      namespace: NAMESPACE,
      name,
    })) as Meta & {
      spec: { replicas: number };
    };
  const statefulSet = (name: string) =>
    apps()
      .readNamespacedStatefulSet({ name, namespace: NAMESPACE })
      .then(
        (set) => set,
        () => undefined,
      );
  const post = (mode: 'resource' | 'ref', op: 'add' | 'update' | 'delete', object: Meta) =>
    fetch(sink, knativeRequest(bed.apiserverUrl, mode, op, object));

  it('reconciles a Resource-mode add and a Reference-mode update of the primary', async () => {
    await custom().createNamespacedCustomObject({
      ...target,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${target.group}/${target.version}`,
        kind: 'DatabaseCluster',
        metadata: { name: 'orders' },
        spec: { engine: 'postgres', version: '16', replicas: 1, storage: { size: '1Gi' } },
      },
    });
    assert.equal(await statefulSet('orders'), undefined, 'nothing reconciled it yet');
    const added = await post('resource', 'add', await cluster('orders'));
    assert.equal(added.status, 200, await added.text());
    assert.equal((await statefulSet('orders'))?.spec?.replicas, 1);

    await custom().patchNamespacedCustomObject(
      {
        ...target,
        namespace: NAMESPACE,
        name: 'orders',
        body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
      },
      // client-node 1.x: JSON patch needs its content type said
      { headers: { 'Content-Type': 'application/json-patch+json' } } as never,
    );
    // a reference carries no spec: the reconcile reads the object from the apiserver
    const updated = await post('ref', 'update', await cluster('orders'));
    assert.equal(updated.status, 200, await updated.text());
    assert.equal((await statefulSet('orders'))?.spec?.replicas, 3);
  });

  it('reconciles the owner of an owned object, from the object or from its reference', async () => {
    for (const mode of ['resource', 'ref'] as const) {
      // someone scales the StatefulSet by hand; the event about it repairs it
      const scale = await apps().readNamespacedStatefulSetScale({
        name: 'orders',
        namespace: NAMESPACE,
      });
      await apps().replaceNamespacedStatefulSetScale({
        name: 'orders',
        namespace: NAMESPACE,
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: scale.metadata ?? {},
          spec: { replicas: 7 },
        },
      });
      const drifted = await statefulSet('orders');
      assert.equal(drifted?.spec?.replicas, 7);
      const response = await post(mode, 'update', {
        ...(drifted as Meta),
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
      });
      assert.equal(response.status, 200, `${mode}: ${await response.text()}`);
      await waitFor(
        async () => (await statefulSet('orders'))?.spec?.replicas === 3,
        `${mode}: the StatefulSet back at the cluster's 3 replicas`,
      );
    }
  });

  it('accepts and ignores what it does not reconcile; refuses what is malformed', async () => {
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'unowned', namespace: NAMESPACE, uid: randomUUID(), resourceVersion: '1' },
    };
    assert.equal((await post('resource', 'add', configMap)).status, 202);
    const pod = { ...configMap, kind: 'Pod', metadata: { ...configMap.metadata, name: 'p' } };
    assert.equal((await post('resource', 'add', pod)).status, 202);
    const noName = knativeRequest(bed.apiserverUrl, 'ref', 'add', configMap);
    const broken = await fetch(sink, { ...noName, body: JSON.stringify({ kind: 'ConfigMap' }) });
    assert.equal(broken.status, 400);
    assert.match(await broken.text(), /not an ApiServerSource reference: apiVersion/);
  });

  it('answers Knative probes on the serving port, and records what Knative gave up on', async () => {
    assert.equal((await fetch(new URL('/readyz', sink))).status, 200);
    assert.equal((await fetch(new URL('/healthz', sink))).status, 200);
    // the Trigger's deadLetterSink: the event, with the extensions Knative adds
    const request = knativeRequest(bed.apiserverUrl, 'resource', 'update', await cluster('orders'));
    const response = await fetch(new URL('/dead-letters', sink), {
      ...request,
      headers: {
        ...(request.headers as Record<string, string>),
        'ce-knativeerrorcode': '503',
        'ce-knativeerrordata': Buffer.from('reconciler unavailable').toString('base64'),
        'ce-knativeerrordest': sink,
      },
    });
    assert.equal(response.status, 200, await response.text());
    const nc = await connect({ servers: bed.natsUrl });
    try {
      const letters = (await readMessages(nc, Streams.deadLetters, 'kubebus.dlq.>')).map(
        (message) => DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data))),
      );
      assert.equal(letters.length, 1);
      assert.equal(letters[0]?.code, 'KUBEBUS_DELIVERY_FAILED');
      assert.deepEqual(letters[0]?.key, {
        group: target.group,
        resource: target.plural,
        namespace: NAMESPACE,
        name: 'orders',
      });
      assert.match(letters[0]?.reason ?? '', /last answer 503 reconciler unavailable/);
    } finally {
      await nc.close();
    }
  });
});
