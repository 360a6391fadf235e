// A resource in two versions on the test kit's servers, as an operator author
// tests it: its conversions hold the round-trip property, the kit installs
// its CRD pointing at the webhook the operator serves in-process, and an
// object applied as the old version is reconciled in the storage version and
// reads back in both.
import { checkConversions, startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineOperator, defineResource, resource, type ObjectMeta } from 'kubebus';
import { connect as tcpConnect } from 'node:net';
import { z } from 'zod';
import { Gadget, GadgetV1alpha1, gadgetOperatorV2 } from '../support/operators/gadgets.js';

/** A second versioned resource whose conversion refuses one value. */
const Dial = defineResource({
  group: 'test.kubebus.dev',
  kind: 'Dial',
  scope: 'Namespaced',
  versions: {
    v1beta1: { spec: z.object({ level: z.int() }), status: z.object({}) },
    v1: { spec: z.object({ percent: z.int() }), status: z.object({}) },
  },
  storage: 'v1',
  convert: {
    v1beta1: {
      toStorage: ({ spec }) => {
        if (spec.level === 13) throw new Error('level 13 has no percentage');
        return { spec: spec.level === undefined ? {} : { percent: spec.level * 10 } };
      },
      fromStorage: ({ spec }) => ({
        spec: spec.percent === undefined ? {} : { level: Math.round(spec.percent / 10) },
      }),
    },
  },
});
const dials = defineOperator({ name: 'dials', for: Dial, reconcile: async () => undefined });

/** A kind first shipped in one version, then in two (its CRD on the cluster has no webhook). */
const KnobV1alpha1 = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1alpha1',
  kind: 'Knob',
  scope: 'Namespaced',
  spec: z.object({ turns: z.int() }),
  status: z.object({}),
});
const Knob = defineResource({
  group: 'test.kubebus.dev',
  kind: 'Knob',
  scope: 'Namespaced',
  versions: {
    v1alpha1: { spec: z.object({ turns: z.int() }), status: z.object({}) },
    v1: { spec: z.object({ degrees: z.int() }), status: z.object({}) },
  },
  storage: 'v1',
  convert: {
    v1alpha1: {
      toStorage: ({ spec }) => ({
        spec: spec.turns === undefined ? {} : { degrees: spec.turns * 360 },
      }),
      fromStorage: ({ spec }) => ({
        spec: spec.degrees === undefined ? {} : { turns: Math.round(spec.degrees / 360) },
      }),
    },
  },
});

const Crd = resource<{
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: { conversion?: { strategy: string; webhook?: { clientConfig?: { url?: string } } } };
}>({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  scope: 'Cluster',
});

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

describe('a versioned resource in the test kit', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Gadget, Dial);
    await env.run(gadgetOperatorV2());
    await env.run(dials);
  });
  after(() => env.stop());

  it('holds the round-trip property of its conversions', () => {
    checkConversions(Gadget);
  });

  it('reconciles an object applied as v1alpha1 in v1, and reads it in both', async () => {
    await env.apply({
      apiVersion: 'test.kubebus.dev/v1alpha1',
      kind: 'Gadget',
      metadata: { name: 'kit', namespace: 'default' },
      spec: { host: 'kit.example', port: 8443 },
    });
    await env.waitForCondition(Gadget, 'kit', { type: 'Ready' });
    const stored = await env.get(Gadget, 'kit');
    assert.deepEqual(stored?.spec, { endpoint: { host: 'kit.example', port: 8443 } });
    assert.equal(stored?.status?.address, 'kit.example:8443');
    const old = await env.get(GadgetV1alpha1, 'kit');
    assert.deepEqual(old?.spec, { host: 'kit.example', port: 8443 });
    assert.equal(old?.status?.url, 'http://kit.example:8443');
  });

  it('answers a conversion that throws with its message, and keeps converting', async () => {
    const dial = (name: string, level: number) => ({
      apiVersion: 'test.kubebus.dev/v1beta1',
      kind: 'Dial',
      metadata: { name, namespace: 'default' },
      spec: { level },
    });
    await assert.rejects(env.apply(dial('thirteen', 13)), /level 13 has no percentage/);
    await env.apply(dial('four', 4));
    assert.deepEqual((await env.get(Dial, 'four'))?.spec, { percent: 40 });
    assert.equal(await env.get(Dial, 'thirteen'), undefined);
  });

  it('on an existing cluster keeps the installed conversion and serves no webhook of its own', async () => {
    const crdBefore = await env.get(Crd, 'dials.test.kubebus.dev');
    const url = crdBefore?.spec.conversion?.webhook?.clientConfig?.url;
    assert.match(url ?? '', /^https:\/\/127\.0\.0\.1:\d+\/convert$/);
    assert.equal(await listening(9443), false, 'nothing on 9443 to begin with');
    const existing = await startTestEnvironment({
      cluster: 'existing',
      kubeconfig: env.kubeconfigPath,
      natsUrl: env.natsUrl,
    });
    try {
      await existing.install(Dial);
      const crd = await env.get(Crd, 'dials.test.kubebus.dev');
      assert.equal(crd?.spec.conversion?.webhook?.clientConfig?.url, url);
      assert.equal(crd?.metadata.annotations?.['cert-manager.io/inject-ca-from'], undefined);
      await existing.run(
        defineOperator({ name: 'dials-elsewhere', for: Dial, reconcile: async () => undefined }),
        { env: env.natsEnv },
      );
      assert.equal(await listening(9443), false, 'no self-signed webhook on 9443');
      // still converted by the webhook the CRD names
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1beta1',
        kind: 'Dial',
        metadata: { name: 'five', namespace: 'default' },
        spec: { level: 5 },
      });
      assert.deepEqual((await env.get(Dial, 'five'))?.spec, { percent: 50 });
    } finally {
      await existing.stop();
    }
  });

  it('on an existing cluster refuses a CRD of two versions with no webhook to convert them, and changes nothing', async () => {
    const existing = await startTestEnvironment({
      cluster: 'existing',
      kubeconfig: env.kubeconfigPath,
      natsUrl: env.natsUrl,
    });
    try {
      // no CRD yet: none to keep, and none this process could serve to the cluster
      await assert.rejects(
        existing.install(Knob),
        /Knob has versions v1alpha1, v1, and the cluster's CRD knobs\.test\.kubebus\.dev has no conversion webhook.*--cluster local/,
      );
      assert.equal(await env.get(Crd, 'knobs.test.kubebus.dev'), undefined);
      // shipped in one version (strategy None): its next release is refused, the CRD left as it was
      await existing.install(KnobV1alpha1);
      assert.equal(
        (await env.get(Crd, 'knobs.test.kubebus.dev'))?.spec.conversion?.strategy,
        'None',
      );
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1alpha1',
        kind: 'Knob',
        metadata: { name: 'volume', namespace: 'default' },
        spec: { turns: 3 },
      });
      await assert.rejects(existing.install(Knob), /has no conversion webhook/);
      const crd = await env.get(Crd, 'knobs.test.kubebus.dev');
      assert.deepEqual(
        (crd as unknown as { spec: { versions: { name: string }[] } }).spec.versions.map(
          (v) => v.name,
        ),
        ['v1alpha1'],
      );
      // and the object keeps its spec (not pruned through a version it lacks)
      assert.deepEqual((await existing.get(KnobV1alpha1, 'volume'))?.spec, { turns: 3 });
    } finally {
      await existing.stop();
    }
  });
});
