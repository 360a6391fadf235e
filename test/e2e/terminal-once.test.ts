// A TerminalError is not retried until the object changes: the status it
// leaves (Ready=False, TerminalError) is itself a change of the object, and
// must not start another round (the sixth newcomer's receiver got its failing
// call twice). A spec change runs it again.
import { defineOperator, defineResource, TerminalError } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { untilQuiet } from '../support/wait.js';

const Call = defineResource({
  group: 'terminal.test.kubebus.dev',
  version: 'v1',
  kind: 'Call',
  scope: 'Namespaced',
  spec: z.object({ round: z.int() }),
  status: z.object({}).partial(),
});

/** Every reconcile, by spec round (the operator runs in this process). */
const reconciles: number[] = [];

const calls = defineOperator({
  name: 'calls',
  for: Call,
  reconcile(call) {
    reconciles.push(call.spec.round);
    throw new TerminalError(`the receiver refuses round ${String(call.spec.round)}`);
  },
});

describe('a TerminalError and the status it leaves', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Call);
    await env.run(calls);
  });
  after(() => env?.stop());

  const call = (round: number) => ({
    apiVersion: 'terminal.test.kubebus.dev/v1',
    kind: 'Call',
    metadata: { name: 'once' },
    spec: { round },
  });
  const stopped = (round: number) =>
    env.waitFor(Call, 'once', (c) => {
      const ready = c?.status?.conditions?.find((condition) => condition.type === 'Ready');
      return (
        ready?.reason === 'TerminalError' &&
        ready.message === `the receiver refuses round ${String(round)}`
      );
    });
  /** Until no reconcile has come for a while: the status write's own event has been handled. */
  const quiet = () => untilQuiet(() => reconciles.length, 'no reconcile for 3 s', 3_000);

  it('runs once per generation: its own status write starts no second round', async () => {
    await env.apply(call(1));
    await stopped(1);
    await quiet();
    assert.deepEqual(reconciles, [1]);

    // a spec change runs it again, once
    await env.apply(call(2));
    await stopped(2);
    await quiet();
    assert.deepEqual(reconciles, [1, 2]);
  });
});
