// A resource in two versions on the test kit's servers, as an operator author
// tests it: its conversions hold the round-trip property, the kit installs
// its CRD pointing at the webhook the operator serves in-process, and an
// object applied as the old version is reconciled in the storage version and
// reads back in both.
import { checkConversions, startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineOperator, defineResource } from 'kubebus';
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
        return { spec: { percent: spec.level * 10 } };
      },
      fromStorage: ({ spec }) => ({ spec: { level: Math.round(spec.percent / 10) } }),
    },
  },
});
const dials = defineOperator({ name: 'dials', for: Dial, reconcile: async () => undefined });

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
});
