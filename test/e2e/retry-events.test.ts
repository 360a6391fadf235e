// A reconcile that keeps failing says so on its object before its letter:
// a Warning Event at its 2nd and 4th failed attempts (not the 1st, not each),
// with the error's first line; the object then reconciles as usual.
import { EventsV1Api, KubeConfig } from '@kubernetes/client-node';
import { defineOperator, defineResource } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
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

const mirrors = defineOperator({
  name: 'mirrors',
  for: Mirror,
  reconcile(mirror) {
    if (failures < 4) {
      failures++;
      return Promise.reject(
        new Error(`source ${mirror.spec.source} not reachable yet\n    at fetch (mirror.ts:1)`),
      );
    }
    return Promise.resolve({ status: { synced: true }, ready: { status: true, reason: 'Synced' } });
  },
});

describe('a failing reconcile on its object', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Mirror);
    await env.run(mirrors);
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
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    const events = kc.makeApiClient(EventsV1Api);
    let notes: string[] = [];
    // Events are sent in the background (ADR 0029)
    await waitFor(async () => {
      const { items } = await events.listNamespacedEvent({ namespace: 'default' });
      notes = items
        .filter((e) => e.reason === 'ReconcileRetrying' && e.regarding?.name === 'upstream')
        .map((e) => `${e.type ?? ''} ${e.note ?? ''}`)
        .sort();
      return notes.length >= 2;
    }, 'two ReconcileRetrying Events');
    assert.deepEqual(notes, [
      'Warning attempt 2 failed, retried with backoff: source git.example.com not reachable yet',
      'Warning attempt 4 failed, retried with backoff: source git.example.com not reachable yet',
    ]);
  });
});
