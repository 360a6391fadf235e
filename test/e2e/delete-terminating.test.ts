// `ctx.delete` says whether the object is gone: an owned object the
// apiserver keeps after the DELETE (a finalizer pending) answers
// 'terminating', asked again as well, until it is gone ('absent'); one
// deleted at once answers 'deleted'. An operator that must wait for a name to
// be free before making another can tell.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';

const Cleanup = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Cleanup',
  scope: 'Namespaced',
  // `round` only makes a new generation: another reconcile, another delete
  spec: z.object({ target: z.string(), round: z.int().default(1) }),
  status: z.object({ answer: z.string(), round: z.int() }).partial(),
});

/** Every answer, in order, by object and round (the operator runs in this process). */
const answers = new Map<string, string[]>();
const answersOf = (name: string, round: number) => answers.get(`${name}/${round}`) ?? [];

const cleanups = defineOperator({
  name: 'cleanups',
  for: Cleanup,
  owns: [kinds.ConfigMap],
  async reconcile(cleanup, ctx) {
    const answer = await ctx.delete(kinds.ConfigMap, cleanup.spec.target);
    const key = `${cleanup.metadata.name}/${cleanup.spec.round}`;
    answers.set(key, [...(answers.get(key) ?? []), answer]);
    return { status: { answer, round: cleanup.spec.round } };
  },
});

const HOLD = 'test.kubebus.dev/hold';

describe('ctx.delete and an object still terminating', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Cleanup);
    await env.run(cleanups);
  });
  after(() => env?.stop());

  const cleanup = (name: string, target: string, round: number) => ({
    apiVersion: 'test.kubebus.dev/v1',
    kind: 'Cleanup',
    metadata: { name },
    spec: { target, round },
  });
  const configMap = (name: string, finalizers: string[]) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, finalizers },
    data: { kept: 'yes' },
  });
  const answered = (name: string, round: number) =>
    env.waitFor(Cleanup, name, (c) => c?.status?.round === round);

  it("answers 'terminating' while a finalizer keeps the object, then 'absent'", async () => {
    await env.apply(configMap('held', [HOLD]));
    await env.apply(cleanup('first', 'held', 1));
    await answered('first', 1);
    assert.equal(answersOf('first', 1)[0], 'terminating');
    assert.ok((await env.get(kinds.ConfigMap, 'held'))?.metadata.deletionTimestamp);

    await env.apply(cleanup('first', 'held', 2));
    await answered('first', 2);
    assert.equal(answersOf('first', 2)[0], 'terminating', 'asked again: still there');
    // every answer while the finalizer held it (the reconciles after each status write too)
    assert.deepEqual(
      new Set([...answersOf('first', 1), ...answersOf('first', 2)]),
      new Set(['terminating']),
    );

    await env.apply(configMap('held', []));
    await env.waitFor(kinds.ConfigMap, 'held', (c) => c === undefined);
    await env.apply(cleanup('first', 'held', 3));
    await answered('first', 3);
    assert.equal(answersOf('first', 3)[0], 'absent');
  });

  it("answers 'deleted' for an object the apiserver removes at once", async () => {
    await env.apply(configMap('plain', []));
    await env.apply(cleanup('second', 'plain', 1));
    await answered('second', 1);
    // its next reconcile (after the status write) finds it gone
    assert.equal(answersOf('second', 1)[0], 'deleted');
    assert.equal(await env.get(kinds.ConfigMap, 'plain'), undefined);
  });
});
