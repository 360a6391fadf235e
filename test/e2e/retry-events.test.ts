// A reconcile that keeps failing says so on its object before its letter:
// a Warning Event at its 2nd and 4th failed attempts (not the 1st, not each),
// with the error's first line, and Ready=False with that line at the failing
// generation; the object then reconciles as usual. The same
// when the failure is the operator's own call to an API that refuses the
// connection (in reconcile, or in a ctx.once perform): an outside system's
// outage is counted and shown, where the apiserver's is only waited out
// (error-origin.ts; it is never dead-lettered either: failure-class.ts). A
// write the apiserver itself keeps answering with a 500 (a webhook that does
// not answer) is waited out too, and shows at the 4th, 8th… failure in a row.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { eventNotes } from '../support/event-notes.js';
import { waitFor } from '../support/wait.js';

const Mirror = defineResource({
  group: 'retry.test.kubebus.dev',
  version: 'v1',
  kind: 'Mirror',
  scope: 'Namespaced',
  spec: z.object({ source: z.string() }),
  status: z.object({ synced: z.boolean() }).partial(),
});

/** Failed attempts so far (the operator runs in this process). */
let failures = 0;
/** While set, a Mirror of a `held.` source fails. */
let holding = false;

const mirrors = defineOperator({
  name: 'mirrors',
  for: Mirror,
  reconcile(mirror) {
    if (holding && mirror.spec.source.startsWith('held.'))
      return Promise.reject(new Error(`source ${mirror.spec.source} not reachable yet`));
    if (failures < 4) {
      failures++;
      return Promise.reject(
        new Error(`source ${mirror.spec.source} not reachable yet\n    at fetch (mirror.ts:1)`),
      );
    }
    return Promise.resolve({ status: { synced: true }, ready: { status: true, reason: 'Synced' } });
  },
});

const Webhook = defineResource({
  group: 'retry.test.kubebus.dev',
  version: 'v1',
  kind: 'Webhook',
  scope: 'Namespaced',
  spec: z.object({ via: z.enum(['reconcile', 'once', 'wrapped']) }),
  status: z.object({ called: z.boolean() }).partial(),
});

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let endpoint = '';

const webhooks = defineOperator({
  name: 'webhooks',
  for: Webhook,
  async reconcile(hook, ctx) {
    const call = async () => {
      await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(5_000) });
    };
    if (hook.spec.via === 'reconcile') await call();
    else if (hook.spec.via === 'once') await ctx.once('notify', { perform: call });
    else {
      // as client libraries word it: the URL, with its key, in the message
      const url = `${endpoint}?api_key=S3CRET`;
      await call().catch((error: unknown) => {
        throw new Error(`POST ${url.replace('http://', 'http://bill:pa55@')} failed`, {
          cause: error,
        });
      });
    }
    return { status: { called: true } };
  },
});

const Published = defineResource({
  group: 'retry.test.kubebus.dev',
  version: 'v1',
  kind: 'Published',
  scope: 'Namespaced',
  spec: z.object({ text: z.string() }),
  status: z.object({ written: z.boolean() }).partial(),
});

/** Writes its text into a ConfigMap: what a failing admission webhook stands in front of. */
const publisher = defineOperator({
  name: 'publisher',
  for: Published,
  owns: [kinds.ConfigMap],
  async reconcile(published, ctx) {
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: published.metadata.name, labels: { 'retry-test': 'published' } },
      data: { text: published.spec.text },
    });
    return { status: { written: true } };
  },
});

/** A webhook on the publisher's ConfigMaps whose endpoint refuses: the apiserver answers 500. */
function failingWebhook(port: number, labelled: string) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'retry-test-refusing' },
    webhooks: [
      {
        name: 'refusing.retry.test.kubebus.dev',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 5,
        clientConfig: { url: `https://127.0.0.1:${String(port)}/validate` },
        objectSelector: { matchLabels: { 'retry-test': labelled } },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['configmaps'],
          },
        ],
      },
    ],
  };
}

/** The ReconcileRetrying Events of an object, as `type note`, sorted. */
const retryNotes = (env: TestEnvironment, name: string) =>
  eventNotes(env, name, 'ReconcileRetrying');

describe('a failing reconcile on its object', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    endpoint = `http://127.0.0.1:${String(await closedPort())}/notify`;
    env = await startTestEnvironment();
    await env.install(Mirror);
    await env.install(Webhook);
    await env.install(Published);
    await env.run(mirrors);
    await env.run(webhooks);
    await env.run(publisher);
  });
  after(() => env?.stop());

  it('records a Warning Event at its 2nd and 4th failed attempt, then reconciles', async () => {
    await env.apply({
      apiVersion: 'retry.test.kubebus.dev/v1',
      kind: 'Mirror',
      metadata: { name: 'upstream' },
      spec: { source: 'git.example.com' },
    });
    await env.waitForCondition(Mirror, 'upstream', { type: 'Ready', reason: 'Synced' });
    assert.equal(failures, 4);
    let notes: string[] = [];
    // Events are sent in the background (ADR 0029)
    await waitFor(async () => {
      notes = await retryNotes(env, 'upstream');
      return notes.length >= 2;
    }, 'two ReconcileRetrying Events');
    assert.deepEqual(notes, [
      'Warning attempt 2 failed, retried with backoff: source git.example.com not reachable yet',
      'Warning attempt 4 failed, retried with backoff: source git.example.com not reachable yet',
    ]);
  });

  it('says Ready=False while a new generation is retried, over the last one’s Ready=True', async () => {
    const mirror = (source: string) => ({
      apiVersion: 'retry.test.kubebus.dev/v1',
      kind: 'Mirror',
      metadata: { name: 'moved' },
      spec: { source },
    });
    await env.apply(mirror('old.example.com'));
    const before = await env.waitForCondition(Mirror, 'moved', { type: 'Ready', reason: 'Synced' });
    assert.equal(before.observedGeneration, 1);
    holding = true;
    await env.apply(mirror('held.example.com'));
    const retrying = await env.waitForCondition(Mirror, 'moved', {
      type: 'Ready',
      status: 'False',
      reason: 'ReconcileRetrying',
    });
    // the generation that fails, and why, where `kubectl get` and `kubectl wait` look
    assert.equal(retrying.observedGeneration, 2);
    assert.equal(retrying.message, 'source held.example.com not reachable yet');
    holding = false;
    const after = await env.waitForCondition(Mirror, 'moved', { type: 'Ready', reason: 'Synced' });
    assert.equal(after.observedGeneration, 2);
  });

  it('counts an operator’s own call that cannot connect, in reconcile or in ctx.once, as a failure', async () => {
    for (const via of ['reconcile', 'once'] as const)
      await env.apply({
        apiVersion: 'retry.test.kubebus.dev/v1',
        kind: 'Webhook',
        metadata: { name: `by-${via}` },
        spec: { via },
      });
    // a wait for the apiserver or NATS would stay at attempt 1 and say nothing on the object
    for (const via of ['reconcile', 'once']) {
      let notes: string[] = [];
      await waitFor(async () => {
        notes = await retryNotes(env, `by-${via}`);
        return notes.length >= 2;
      }, `two ReconcileRetrying Events of by-${via}`);
      assert.match(notes[0] ?? '', /^Warning attempt 2 failed, retried with backoff: fetch failed/);
      assert.match(notes[1] ?? '', /^Warning attempt 4 failed/);
      // and its status says so, with the cause a bare "fetch failed" hides
      const ready = await env.waitForCondition(Webhook, `by-${via}`, {
        type: 'Ready',
        status: 'False',
        reason: 'Unreachable',
      });
      assert.match(ready.message ?? '', /retried without limit: fetch failed: .*ECONNREFUSED/);
    }
  });

  it("shows an error that quotes a URL without the URL's credentials", async () => {
    await env.apply({
      apiVersion: 'retry.test.kubebus.dev/v1',
      kind: 'Webhook',
      metadata: { name: 'by-wrapped' },
      spec: { via: 'wrapped' },
    });
    let notes: string[] = [];
    await waitFor(async () => {
      notes = await retryNotes(env, 'by-wrapped');
      return notes.length >= 1;
    }, 'a ReconcileRetrying Event of by-wrapped');
    const ready = await env.waitForCondition(Webhook, 'by-wrapped', {
      type: 'Ready',
      status: 'False',
      reason: 'Unreachable',
    });
    // `view` reads Events and conditions, not Secrets: neither the password nor the key
    for (const text of [...notes, ready.message ?? '']) {
      assert.doesNotMatch(text, /pa55|S3CRET/, text);
      assert.match(
        text,
        /POST http:\/\/\[redacted\]@127\.0\.0\.1:\d+\/notify\?\[redacted\] failed/,
      );
    }
  });

  it('shows a write the apiserver keeps answering with a 500, waited out without limit', async () => {
    const port = await closedPort();
    await env.apply(failingWebhook(port, 'published'));
    await env.apply({
      apiVersion: 'retry.test.kubebus.dev/v1',
      kind: 'Published',
      metadata: { name: 'behind-webhook' },
      spec: { text: 'hello' },
    });
    // never counted nor dead-lettered (an outage), yet `kubectl get` and `describe` say why
    const ready = await env.waitForCondition(Published, 'behind-webhook', {
      type: 'Ready',
      status: 'False',
      reason: 'ReconcileRetrying',
    });
    assert.match(
      ready.message ?? '',
      /failed calling webhook "refusing\.retry\.test\.kubebus\.dev"/,
    );
    let notes: string[] = [];
    await waitFor(async () => {
      notes = await retryNotes(env, 'behind-webhook');
      return notes.some((note) => note.includes('failed 8 times'));
    }, 'the ReconcileRetrying Event of the 8th failure of behind-webhook');
    const counts = notes.map((note) => Number(/failed (\d+) times in a row/.exec(note)?.[1]));
    // at the 4th, 8th, 16th… failure in a row: not at the 1st (a blip), not at each
    assert.deepEqual(
      counts.filter((n) => n <= 8).sort((a, b) => a - b),
      [4, 8],
    );
    for (const note of notes)
      assert.match(
        note,
        /^Warning failed \d+ times in a row, the apiserver answering 500; retried without limit, never dead-lettered: .*failed calling webhook/,
      );
    // the webhook no longer in the way: the waiting retry gets through
    await env.apply(failingWebhook(port, 'nothing-carries-this'));
    const written = await env.waitForCondition(Published, 'behind-webhook', { type: 'Ready' });
    assert.equal(written.observedGeneration, 1);
  });
});
