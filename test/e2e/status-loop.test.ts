// A status that changes at every reconcile (a counter here) loops: its write
// reconciles the object again, without end. Nothing fails, so the runtime
// says it — once, as a Warning Event naming the field — on real servers,
// where the loop is the watcher's mark of the object's own status write.
import { EventsV1Api, KubeConfig } from '@kubernetes/client-node';
import { defineOperator, defineResource } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { waitFor } from '../support/wait.js';

const Probe = defineResource({
  group: 'loop.test.kubebus.dev',
  version: 'v1',
  kind: 'Probe',
  scope: 'Namespaced',
  spec: z.object({ target: z.string() }),
  status: z.object({ checks: z.number().int() }).partial(),
});

const probes = defineOperator({
  name: 'probes',
  for: Probe,
  // the newcomer's mistake: a count of reconciles in the status (read through ctx, as an
  // operator that reads its object again does: its own status write is no new input)
  async reconcile(probe, ctx) {
    const read = await ctx.get(Probe, probe.metadata.name);
    return { status: { checks: (read?.status?.checks ?? 0) + 1 } };
  },
});

describe('a status that changes at every reconcile', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Probe);
    await env.run(probes);
  });
  after(() => env?.stop());

  it('is said once on the object, naming the field', async () => {
    await env.apply({
      apiVersion: 'loop.test.kubebus.dev/v1',
      kind: 'Probe',
      metadata: { name: 'counting' },
      spec: { target: 'db.example.com' },
    });
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    const events = kc.makeApiClient(EventsV1Api);
    const loopNotes = async () => {
      const { items } = await events.listNamespacedEvent({ namespace: 'default' });
      return items
        .filter(
          (e) => e.reason === 'StatusChangesEveryReconcile' && e.regarding?.name === 'counting',
        )
        .map((e) => `${e.type ?? ''} ${e.note ?? ''}`);
    };
    let notes: string[] = [];
    // Events are sent in the background (ADR 0029)
    await waitFor(async () => {
      notes = await loopNotes();
      return notes.length > 0;
    }, 'a StatusChangesEveryReconcile Event');
    assert.match(
      notes[0] ?? '',
      /^Warning status\.checks changed at each of 10 reconciles in a row that its own status write started/,
    );
    // the loop goes on (it is the operator's to end), and is not said again
    const seen = (await env.waitFor(Probe, 'counting', (p) => (p?.status?.checks ?? 0) > 0))?.status
      ?.checks;
    await env.waitFor(Probe, 'counting', (p) => (p?.status?.checks ?? 0) >= (seen ?? 0) + 20);
    const again = await loopNotes();
    assert.equal(again.length, 1, again.join('\n'));
    await env.delete(Probe, 'counting');
  });
});
