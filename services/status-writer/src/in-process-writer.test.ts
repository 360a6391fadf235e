// The in-process door's own rules, with a stand-in applier: the reconcile's
// worker is given back before the write waits, writes are bounded by the
// status writer's own concurrency, and a write that cannot start is declined
// to the bus. Judging and writing are the StatusApplier's (status-applier.test.ts).
import type { OutcomeRecorder, StatusIntent } from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { inProcessWriter } from './in-process-writer.js';
import type { StatusApplier } from './status-applier.js';

const silent = createLogger({
  service: 'test',
  destination: new Writable({
    write: (_chunk, _enc, done) => {
      done();
    },
  }),
});

const intentOf = (name: string): StatusIntent => ({
  key: { group: 'g', resource: 'r', namespace: 'ns', name },
  apiVersion: 'g/v1',
  kind: 'R',
  uid: `uid-${name}`,
  observedGeneration: 1,
  status: {},
  time: new Date().toISOString(),
});

/** An applier whose writes finish when the test says so. */
function gatedApplier() {
  const gates = new Map<string, () => void>();
  const applier = {
    applyIntent: (intent: StatusIntent, context: { signal: AbortSignal }) =>
      new Promise<undefined>((resolve, reject) => {
        gates.set(intent.key.name, () => {
          resolve(undefined);
        });
        context.signal.addEventListener('abort', () => {
          reject(context.signal.reason as Error);
        });
      }),
  } as unknown as StatusApplier;
  return { applier, gates };
}

function writerOf(applier: StatusApplier, maxConcurrent: number) {
  const handoffs = new Counter({
    name: 'handoffs',
    help: 'test',
    labelNames: ['path'],
    registers: [new Registry()],
  });
  const outcomes = { record: () => undefined } as unknown as OutcomeRecorder;
  return { writer: inProcessWriter({ applier, outcomes, handoffs, log: silent, maxConcurrent }) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the in-process status writer', () => {
  it("gives the reconcile's worker back, and writes no more at once than its own workers", async () => {
    const { applier, gates } = gatedApplier();
    const { writer } = writerOf(applier, 1);
    const released: string[] = [];
    const guardOf = (name: string) => ({
      fence: () => undefined,
      signal: new AbortController().signal,
      releaseWorker: () => released.push(name),
    });
    const first = writer.write(intentOf('a'), guardOf('a'));
    const second = writer.write(intentOf('b'), guardOf('b'));
    await turn();
    // both workers given back at once, though only one write started
    assert.deepEqual(released, ['a', 'b']);
    assert.deepEqual([...gates.keys()], ['a']);
    gates.get('a')?.();
    assert.equal(await first, true);
    await turn();
    assert.deepEqual([...gates.keys()], ['a', 'b']);
    gates.get('b')?.();
    assert.equal(await second, true);
  });

  it('declines, for the bus, a write whose reconcile was revoked while it waited for a slot', async () => {
    const { applier, gates } = gatedApplier();
    const { writer } = writerOf(applier, 1);
    const busy = writer.write(intentOf('a'));
    const revoked = new AbortController();
    const waiting = writer.write(intentOf('b'), {
      fence: () => undefined,
      signal: revoked.signal,
    });
    await turn();
    revoked.abort();
    assert.equal(await waiting, false);
    gates.get('a')?.();
    assert.equal(await busy, true);
    assert.deepEqual([...gates.keys()], ['a'], 'the revoked write started after all');
  });
});
