// The fence in the `ctx` a reconcile gets: every write hands the apiserver
// client the reconcile's signal, which the client checks before it sends —
// so once the runtime aborts a reconcile (its partition's lease lost), the
// write is refused. Found missing for events and create-once by kubebus
// test's handover schedule (ADR 0005, 0017).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kinds } from '@kubebus/shared/definition';
import { EventRecorder, type KubeClient } from '@kubebus/shared/kube';
import { pino } from 'pino';
import { siteContext } from './site-context.test-support.js';

/** What the client was asked to send, and with which signal; it refuses as the real one does. */
function recordingClient(sent: (AbortSignal | undefined)[]): KubeClient {
  return {
    request: (_path: string, init: { signal?: AbortSignal } = {}) => {
      sent.push(init.signal);
      init.signal?.throwIfAborted();
      return Promise.resolve({});
    },
  } as unknown as KubeClient;
}

const contextWith = (client: KubeClient, signal: AbortSignal, events?: EventRecorder) =>
  siteContext(client, signal, events === undefined ? {} : { events });

describe('ctx writes carry the reconcile signal', () => {
  it('an Event and a create-once are sent with it, and refused once it is aborted', async () => {
    const sent: (AbortSignal | undefined)[] = [];
    const abort = new AbortController();
    const ctx = contextWith(recordingClient(sent), abort.signal);
    await ctx.event('Normal', 'Announced', 'once');
    assert.equal(
      await ctx.createOnce(kinds.ConfigMap, { metadata: { name: 'c' }, data: {} }),
      'created',
    );
    assert.deepEqual(sent, [abort.signal, abort.signal]);

    abort.abort();
    await assert.rejects(ctx.event('Normal', 'Announced', 'again'), { name: 'AbortError' });
    await assert.rejects(ctx.createOnce(kinds.ConfigMap, { metadata: { name: 'd' }, data: {} }), {
      name: 'AbortError',
    });
  });

  it('an Event in the background is recorded without waiting and refused once aborted', async () => {
    const reasons: string[] = [];
    // an apiserver that never answers: the reconcile must not wait for it
    const events = new EventRecorder(
      (_regarding, input) => {
        reasons.push(input.reason);
        return new Promise<void>(() => undefined);
      },
      { log: pino({ level: 'silent' }) },
    );
    const abort = new AbortController();
    const ctx = contextWith(recordingClient([]), abort.signal, events);
    await ctx.event('Normal', 'Announced', 'once');
    assert.deepEqual(reasons, ['Announced']);
    assert.equal(events.inFlight, 1);
    abort.abort();
    await assert.rejects(ctx.event('Normal', 'Announced', 'again'), { name: 'AbortError' });
    assert.deepEqual(reasons, ['Announced'], 'nothing more was sent');
  });

  it('a reason the apiserver would refuse (empty, over 128 bytes) is a TerminalError at the call', async () => {
    const events = new EventRecorder(() => Promise.resolve(), { log: pino({ level: 'silent' }) });
    const ctx = contextWith(recordingClient([]), new AbortController().signal, events);
    // 65 characters, 130 bytes: the apiserver counts bytes
    for (const reason of ['', 'R'.repeat(129), 'É'.repeat(65)])
      await assert.rejects(ctx.event('Normal', reason, 'bad'), {
        name: 'TerminalError',
        message: /reason must be 1-128 bytes/,
      });
    assert.equal(events.inFlight, 0, 'nothing sent');
  });
});
