// `finalize` gets the spec as `reconcile` does: parsed by the resource's
// schema, defaults in. An object deleted while its spec does not parse (a
// rule the CRD cannot express) keeps its finalizer and says why on itself;
// fixing the spec lets the cleanup run, with the fixed spec.
import { defineOperator, defineResource } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';

const Bucket = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Bucket',
  scope: 'Namespaced',
  spec: z.object({
    // a rule only zod holds: the CRD takes any string
    target: z.string().refine((name) => name === name.toLowerCase(), 'lower case only'),
    region: z.string().default('eu-1'),
  }),
  status: z.object({}),
});

/** What each finalize was given: the spec it cleaned up after. */
const finalized: { target: string; region: string }[] = [];

const buckets = defineOperator({
  name: 'buckets',
  for: Bucket,
  reconcile: async () => undefined,
  async finalize(bucket) {
    finalized.push({ target: bucket.spec.target, region: bucket.spec.region });
  },
});

describe('finalize and the spec it is given', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Bucket);
    await env.run(buckets);
  });
  after(() => env?.stop());

  const bucket = (target: string) => ({
    apiVersion: 'test.kubebus.dev/v1',
    kind: 'Bucket',
    metadata: { name: 'logs' },
    spec: { target },
  });

  it('keeps an object whose spec does not parse, says why, and finalizes once it is fixed', async () => {
    await env.apply(bucket('archive'));
    await env.waitForCondition(Bucket, 'logs', { type: 'Ready' });
    await env.apply(bucket('Archive'));
    await env.waitForCondition(Bucket, 'logs', {
      type: 'Ready',
      status: 'False',
      reason: 'InvalidSpec',
    });
    await env.delete(Bucket, 'logs');
    const held = await env.waitForCondition(Bucket, 'logs', {
      type: 'Ready',
      status: 'False',
      reason: 'TerminalError',
    });
    assert.match(
      held.message,
      /^cannot finalize: invalid spec: spec\.target: lower case only; fix the spec, or remove the finalizer /,
    );
    assert.deepEqual(finalized, []);
    assert.ok((await env.get(Bucket, 'logs'))?.metadata.finalizers?.length, 'the finalizer kept');

    await env.apply(bucket('archive'));
    await env.waitFor(Bucket, 'logs', (b) => b === undefined);
    // parsed: the default filled in, as reconcile sees it
    assert.deepEqual(finalized, [{ target: 'archive', region: 'eu-1' }]);
  });
});
