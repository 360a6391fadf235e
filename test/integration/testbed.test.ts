// The test bed runs real servers: a CRD with a status subresource is served,
// server-side apply works on /status through @kubernetes/client-node, and
// JetStream delivers to a durable pull consumer with explicit acks.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { TEST_GROUP, installCrd, widgetCrd } from '../support/kube.js';

const group = TEST_GROUP;

describe('test bed', { timeout: 300_000 }, () => {
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start();
  });
  after(async () => {
    await bed.stop();
  });

  it('serves a CRD with a status subresource and applies status with SSA', async () => {
    const kc = bed.kubeConfig();
    await installCrd(kc, widgetCrd); // waits until the CRD is Established

    const objects = kc.makeApiClient(CustomObjectsApi);
    const target = { group, version: 'v1', namespace: 'default', plural: 'widgets' };
    await objects.createNamespacedCustomObject({
      ...target,
      body: {
        apiVersion: `${group}/v1`,
        kind: 'Widget',
        metadata: { name: 'w.with.dots' },
        spec: { size: 3 },
      },
    });

    await objects.patchNamespacedCustomObjectStatus(
      {
        ...target,
        name: 'w.with.dots',
        body: { apiVersion: `${group}/v1`, kind: 'Widget', status: { phase: 'Ready' } },
        fieldManager: 'kubebus-testbed',
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );

    const read = (await objects.getNamespacedCustomObject({ ...target, name: 'w.with.dots' })) as {
      spec: { size: number };
      status?: { phase?: string };
      metadata: { managedFields?: { manager?: string; subresource?: string }[] };
    };
    assert.equal(read.status?.phase, 'Ready');
    assert.equal(read.spec.size, 3, 'the status patch must not touch the spec');
    assert.ok(
      read.metadata.managedFields?.some(
        (f) => f.manager === 'kubebus-testbed' && f.subresource === 'status',
      ),
      'the field manager owns the status fields through the status subresource',
    );
  });

  it('enforces RBAC for users outside system:masters', async () => {
    const kc = bed.kubeConfig();
    kc.loadFromFile(await bed.userKubeconfig('nobody'));
    const objects = kc.makeApiClient(CustomObjectsApi);
    await assert.rejects(
      objects.listNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: 'default',
        plural: 'widgets',
      }),
      (error: { code?: number }) => error.code === 403,
    );
  });

  it('delivers JetStream messages to a durable pull consumer with explicit acks', async () => {
    const nc = await connect({ servers: bed.natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'TESTBED', subjects: ['testbed.>'] });
      await jsm.consumers.add('TESTBED', {
        durable_name: 'reader',
        ack_policy: AckPolicy.Explicit,
      });
      const js = jetstream(nc);
      const ack = await js.publish('testbed.hello', 'world');
      assert.equal(ack.stream, 'TESTBED');

      const consumer = await js.consumers.get('TESTBED', 'reader');
      const message = await consumer.next({ expires: 5_000 });
      assert.ok(message, 'a message is delivered');
      assert.equal(message.string(), 'world');
      assert.ok(await message.ackAck(), 'the server confirms the ack');

      const info = await consumer.info();
      assert.equal(info.num_ack_pending, 0);
      assert.equal(info.delivered.stream_seq, ack.seq);
    } finally {
      await nc.close();
    }
  });

  it('keeps JetStream state across a nats-server restart', async () => {
    await bed.restartNats({ how: 'kill' });
    const nc = await connect({ servers: bed.natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info('TESTBED');
      assert.equal(info.state.messages, 1);
    } finally {
      await nc.close();
    }
  });

  it('compacts etcd on demand', async () => {
    const revision = await bed.compactEtcd();
    assert.ok(revision > 1);
  });
});
