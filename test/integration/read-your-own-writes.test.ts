// Read-your-own-writes on the real test bed (ADR 0019): the watcher is
// stopped right after the operator's first own write is on the bus, so the
// bus stays behind every later one; each next reconcile (a requeue, which
// needs no watcher) must still see the count it wrote last, and the stale
// reads metric says how each was answered. Without the feature the reconciles
// read the count the bus last recorded and never get past it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { defineOperator, defineResource, kinds, type Operator } from '@kubebus/shared/definition';
import { loadKubeConfig } from '@kubebus/shared/kube';
import { startServiceShell, type ServiceShell } from '@kubebus/shared/obs';
import { roleConfigsOf, runOperator } from '../../packages/kubebus/src/host/run-operator.js';
import type { Role } from '../../packages/kubebus/src/host/role-configs.js';
import { VERSION } from '../../packages/kubebus/src/cli/version.js';
import { startEnvironment } from '../../packages/kubebus/src/testing/environment.js';
import type { TestEnvironment } from '../../packages/kubebus/src/testing-api.js';
import { waitFor } from '../support/wait.js';

const Tally = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Tally',
  scope: 'Namespaced',
  spec: z.object({ upTo: z.int().min(1).max(10) }),
  status: z.object({ count: z.int() }).partial(),
});

/** The same count, kept in its own status: the status writer's write, another role's. */
const Climb = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Climb',
  scope: 'Namespaced',
  spec: z.object({ upTo: z.int().min(1).max(10) }),
  status: z.object({ count: z.int() }).partial(),
});

interface Roles {
  readonly shell: ServiceShell;
  stop(): Promise<void>;
}

describe('read-your-own-writes', { timeout: 300_000 }, () => {
  let environment: TestEnvironment;
  const running: Roles[] = [];

  before(async () => {
    environment = await startEnvironment({ cluster: 'local' });
    await environment.install(Tally);
    await environment.install(Climb);
  });

  after(async () => {
    for (const roles of running.reverse()) await roles.stop();
    await environment.stop();
  });

  /** Some of the operator's roles in this process, as `kubebus run --role` would run them. */
  async function start(operator: Operator, roles: readonly Role[]): Promise<Roles> {
    const shell = await startServiceShell({
      service: `${operator.name}-${roles.join('+')}`,
      logLevel: 'warn',
      health: { host: '127.0.0.1', port: 0 },
    });
    const replicaId = `ryow-${roles.join('_')}`;
    const env = {
      ...environment.natsEnv,
      KUBEBUS_HEALTH_PORT: '0',
      KUBEBUS_BACKOFF_BASE: '100ms',
      KUBEBUS_BACKOFF_CAP: '2s',
    };
    const handle = await runOperator({
      operator,
      roles,
      configs: roleConfigsOf(operator, roles, env, replicaId),
      replicaId,
      kubeConfig: await loadKubeConfig(environment.kubeconfigPath, {}),
      shell,
      version: VERSION,
    });
    shell.started();
    let stopped = false;
    const started: Roles = {
      shell,
      async stop() {
        if (stopped) return;
        stopped = true;
        await handle.stop();
        await shell.health.close();
      },
    };
    running.push(started);
    return started;
  }

  /** Waits until a reconcile saw `count`, saying what they saw if none does. */
  async function untilSeen(seen: readonly number[], count: number): Promise<void> {
    await waitFor(() => seen.includes(count), `the count to reach ${count}`, 90_000).catch(
      (error: unknown) => {
        const saw =
          seen.length > 12
            ? `${seen.slice(0, 12).join(', ')}, … (${seen.length})`
            : seen.join(', ');
        throw new Error(`${(error as Error).message}; the reconciles saw ${saw}`);
      },
    );
  }

  /** How many stale reads of `controller` the roles counted with `outcome`, and all they counted. */
  async function staleReads(roles: Roles, controller: string, outcome: string) {
    const counted = await roles.shell.registry
      .getSingleMetric('kubebus_reconcile_stale_reads_total')
      ?.get();
    const values = counted?.values ?? [];
    const total = values
      .filter((v) => v.labels['controller'] === controller && v.labels['outcome'] === outcome)
      .reduce((sum, v) => sum + v.value, 0);
    return { total, all: JSON.stringify(values) };
  }

  it('a reconcile sees its own last write while the bus is behind it', async () => {
    const seen: number[] = [];
    const watcher: { roles?: Roles } = {};
    const operator = defineOperator({
      name: 'tally',
      for: Tally,
      owns: [kinds.ConfigMap],
      async reconcile(tally, ctx) {
        const name = `${tally.metadata.name}-count`;
        const count = Number((await ctx.get(kinds.ConfigMap, name))?.data?.['count'] ?? '0');
        seen.push(count);
        if (count >= tally.spec.upTo) return { status: { count } };
        // from the second write on, nothing the operator writes reaches the bus
        if (count === 1) await watcher.roles?.stop();
        await ctx.apply(kinds.ConfigMap, {
          metadata: { name },
          data: { count: String(count + 1) },
        });
        // the next reconcile comes from the work queue, not from the watcher
        return { status: { count }, requeueAfterMs: 100 };
      },
    });
    watcher.roles = await start(operator, ['watcher']);
    const reconciler = await start(operator, ['reconciler', 'status-writer']);
    await environment.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Tally',
      metadata: { name: 't', namespace: 'default' },
      spec: { upTo: 4 },
    });
    await untilSeen(seen, 4);
    // each reconcile saw the count it wrote last: never one the bus still had
    assert.deepEqual(seen.slice(0, seen.indexOf(4) + 1), [0, 1, 2, 3, 4]);
    const fellBack = await staleReads(reconciler, 'tally', 'fell_back');
    // 2 → 3 → 4 were read while the bus still had 1: each from the apiserver
    assert.ok(fellBack.total >= 3, `fell_back ${fellBack.total}: ${fellBack.all}`);
  });

  it('a reconcile sees the status it returned last while the bus is behind it', async () => {
    const seen: number[] = [];
    const watcher: { roles?: Roles } = {};
    const operator = defineOperator({
      name: 'climb',
      for: Climb,
      async reconcile(climb) {
        const count = climb.status?.count ?? 0;
        seen.push(count);
        if (count >= climb.spec.upTo) return { status: { count } };
        // from the second status on, nothing the status writer writes reaches the bus
        if (count === 1) await watcher.roles?.stop();
        // the next reconcile comes from the work queue, not from the watcher
        return { status: { count: count + 1 }, requeueAfterMs: 100 };
      },
    });
    watcher.roles = await start(operator, ['watcher']);
    const reconciler = await start(operator, ['reconciler', 'status-writer']);
    await environment.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Climb',
      metadata: { name: 'c', namespace: 'default' },
      spec: { upTo: 4 },
    });
    await untilSeen(seen, 4);
    // each reconcile saw the status it returned last: never the one the bus still had
    assert.ok(
      seen.every((count, i) => i === 0 || count >= (seen[i - 1] ?? 0)),
      `the reconciles saw ${seen.join(', ')}`,
    );
    // and the status writer wrote it: the apiserver has the last
    await waitFor(
      async () => (await environment.get(Climb, 'c', 'default'))?.status?.count === 4,
      'the written status to reach 4',
      30_000,
    );
    const own = await staleReads(reconciler, 'climb', 'own_status');
    // 2, 3 and 4 were read while the bus still had 1
    assert.ok(own.total >= 3, `own_status ${own.total}: ${own.all}`);
  });
});
