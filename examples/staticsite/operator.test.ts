// The StaticSite operator against a real kube-apiserver, etcd and
// nats-server (kubebus/testing), run in this process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import operator, { StaticSite } from './operator.js';

describe('StaticSite', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(StaticSite);
    await env.run(operator);
  });
  after(() => env.stop());

  it('serves the page and is Ready once its pods are', async () => {
    await env.apply({
      apiVersion: 'sites.example.com/v1',
      kind: 'StaticSite',
      metadata: { name: 'hello', labels: { team: 'web' } },
      spec: { html: '<h1>hello</h1>', replicas: 2 },
    });
    assert.equal((await env.get(StaticSite, 'hello'))?.metadata.labels?.team, 'web');
    await env.waitForCondition(StaticSite, 'hello', { type: 'Ready', status: 'False' });
    const page = await env.get(kinds.ConfigMap, 'hello');
    assert.equal(page?.data?.['index.html'], '<h1>hello</h1>');

    await env.markWorkloadsReady();
    const ready = await env.waitForCondition(StaticSite, 'hello', { type: 'Ready' });
    assert.equal(ready.message, '2/2 ready');
    // waitFor: any predicate over the typed object; its timeout shows the object last seen
    const site = await env.waitFor(StaticSite, 'hello', (s) => s?.status?.url !== undefined);
    assert.equal(site?.status?.url, 'http://hello.default.svc');

    // the stand-in keeps playing the kubelets: a scale-up is reported ready too
    await env.apply({
      apiVersion: 'sites.example.com/v1',
      kind: 'StaticSite',
      metadata: { name: 'hello' },
      spec: { html: '<h1>hello</h1>', replicas: 3 },
    });
    const scaled = await env.waitFor(StaticSite, 'hello', (s) => s?.status?.readyReplicas === 3);
    const readyAgain = scaled?.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(readyAgain?.status, 'True');
    assert.equal(readyAgain?.message, '3/3 ready');
    const deployment = await env.get(kinds.Deployment, 'hello');
    assert.equal(deployment?.status?.observedGeneration, deployment?.metadata?.generation);
  });

  it('refuses an unpinned image with a readable reason', async () => {
    await env.apply({
      apiVersion: 'sites.example.com/v1',
      kind: 'StaticSite',
      metadata: { name: 'floating' },
      spec: { html: 'x', image: 'nginx:latest' },
    });
    const invalid = await env.waitForCondition(StaticSite, 'floating', {
      type: 'Ready',
      status: 'False',
      reason: 'InvalidSpec',
    });
    assert.match(invalid.message, /spec\.image: pin a version/);
    assert.equal(await env.get(kinds.Deployment, 'floating'), undefined);
  });
});
