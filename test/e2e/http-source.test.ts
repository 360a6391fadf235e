// The reconciler as a Knative sink: CloudEvents POSTed over HTTP, in
// structured and binary mode, reconcile the object; bad requests change nothing.
import { encodeBinary, type KubeCloudEvent } from '@kubebus/shared/events';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../bed/ports.js';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import { readEvents } from '../support/stream.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };

describe('CloudEvents HTTP source', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let pipeline: Pipeline;
  let sink: string;

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher();
    const port = await freePort();
    // No replica consumes the work stream: only what is POSTed gets reconciled.
    await pipeline.reconciler({
      KUBEBUS_CONSUME: 'false',
      KUBEBUS_HTTP_PORT: String(port),
      KUBEBUS_HTTP_MAX_BYTES: '65536',
    });
    sink = `http://127.0.0.1:${port}/`;
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'knative' } } });
  });

  after(async () => {
    await pipeline.stop();
    await nc.close();
    await bed.stop();
  });

  const createCluster = async (name: string): Promise<KubeCloudEvent> => {
    await bed
      .kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .createNamespacedCustomObject({
        ...target,
        namespace: 'knative',
        body: {
          apiVersion: `${target.group}/${target.version}`,
          kind: 'DatabaseCluster',
          metadata: { name },
          spec: { engine: 'mysql', version: '8.4', replicas: 1, storage: { size: '1Gi' } },
        },
      });
    let event: KubeCloudEvent | undefined;
    await waitFor(async () => {
      event = (
        await readEvents(nc, `kubebus.events.example_kubebus_dev.databaseclusters.knative.${name}`)
      )[0];
      return event !== undefined;
    }, `the watcher's event for ${name}`);
    assert.ok(event);
    return event;
  };
  const statefulSetExists = (name: string) =>
    bed
      .kubeConfig()
      .makeApiClient(AppsV1Api)
      .readNamespacedStatefulSet({ name, namespace: 'knative' })
      .then(
        () => true,
        () => false,
      );

  it('reconciles a structured-mode event and answers 200 when done', async () => {
    const event = await createCluster('structured');
    assert.equal(await statefulSetExists('structured'), false, 'nothing reconciled it yet');
    const response = await fetch(sink, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify(event),
    });
    assert.equal(response.status, 200);
    assert.equal(await statefulSetExists('structured'), true);
  });

  it('reconciles a binary-mode event', async () => {
    const event = await createCluster('binary');
    const { headers, payload } = encodeBinary(event);
    const response = await fetch(sink, { method: 'POST', headers, body: payload });
    assert.equal(response.status, 200);
    assert.equal(await statefulSetExists('binary'), true);
  });

  it('refuses malformed and oversized bodies with a 4xx and changes nothing', async () => {
    const event = await createCluster('untouched');
    const cases: [RequestInit, number][] = [
      [{ headers: { 'content-type': 'application/cloudevents+json' }, body: '{not json' }, 400],
      [
        {
          headers: { 'content-type': 'application/cloudevents+json' },
          body: JSON.stringify({ ...event, type: 'com.example.other' }),
        },
        400,
      ],
      [
        {
          headers: { 'content-type': 'application/cloudevents+json' },
          body: JSON.stringify({ ...event, pad: 'x'.repeat(70_000) }),
        },
        413,
      ],
    ];
    for (const [init, status] of cases) {
      const response = await fetch(sink, { method: 'POST', ...init });
      assert.equal(response.status, status, await response.text());
    }
    assert.equal(await statefulSetExists('untouched'), false);
    assert.equal(
      (await readEvents(nc, `kubebus.events.~.statefulsets.knative.untouched`)).length,
      0,
    );
  });
});
