// What a resource's zod schema names reaches the apiserver's schema, so
// nothing the user writes or the operator reports is pruned: a map's keys
// (`z.record`) in the spec and in the status, a field named `id`, a map of
// anything, unions (which Kubernetes takes only merged: what they allow
// exactly, zod checks), a value of any shape.
import { defineOperator, defineResource } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';

const Team = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Team',
  scope: 'Cluster',
  spec: z.object({
    id: z.string(),
    labels: z.record(z.string(), z.string()).optional(),
    settings: z.record(z.string(), z.unknown()).optional(),
    backend: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('s3'), bucket: z.string() }),
        z.object({ type: z.literal('disk'), sizeGi: z.int() }),
      ])
      .optional(),
    port: z.union([z.int(), z.string()]).optional(),
    extra: z.unknown().optional(),
  }),
  status: z.object({ labelled: z.record(z.string(), z.int()) }).partial(),
});

const teams = defineOperator({
  name: 'teams',
  for: Team,
  // the status echoes each label's length: a map the status writer must keep too
  reconcile: async (team) => ({
    status: {
      labelled: Object.fromEntries(
        Object.entries(team.spec.labels ?? {}).map(([key, value]) => [key, value.length]),
      ),
    },
  }),
});

describe(
  "a resource's maps and keyword-named fields on a real apiserver",
  { timeout: 300_000 },
  () => {
    let env: TestEnvironment;

    before(async () => {
      env = await startTestEnvironment();
      await env.install(Team);
      await env.run(teams);
    });
    after(() => env?.stop());

    it('keeps every key the spec and the status hold', async () => {
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Team',
        metadata: { name: 'alpha' },
        spec: {
          id: 'a1',
          labels: { tier: 'gold', region: 'eu' },
          settings: { retries: 3, nested: { on: true } },
          backend: { type: 'disk', sizeGi: 10 },
          port: 'http',
          extra: [1, { deep: 'x' }],
        },
      });
      const stored = await env.get(Team, 'alpha');
      assert.deepEqual(stored?.spec.backend, { type: 'disk', sizeGi: 10 });
      assert.equal(stored?.spec.port, 'http');
      assert.deepEqual(stored?.spec.extra, [1, { deep: 'x' }]);
      assert.equal(stored?.spec.id, 'a1');
      assert.deepEqual(stored?.spec.labels, { tier: 'gold', region: 'eu' });
      assert.deepEqual(stored?.spec.settings, { retries: 3, nested: { on: true } });
      const reported = await env.waitFor(Team, 'alpha', (t) => t?.status?.labelled !== undefined);
      assert.deepEqual(reported?.status?.labelled, { tier: 4, region: 2 });
    });

    it('takes what only zod refuses (a mix of two union branches), shown as an invalid spec', async () => {
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Team',
        metadata: { name: 'mixed' },
        spec: { id: 'm1', backend: { type: 's3', sizeGi: 10 } },
      });
      const invalid = await env.waitForCondition(Team, 'mixed', {
        type: 'Ready',
        status: 'False',
        reason: 'InvalidSpec',
      });
      assert.match(invalid.message, /spec\.backend/);
    });
  },
);
