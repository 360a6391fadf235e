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

/** A resource that counts up to its spec's `upTo` (in a ConfigMap or its own status). */
function counting(kind: string) {
  return defineResource({
    group: 'test.kubebus.dev',
    version: 'v1',
    kind,
    scope: 'Namespaced',
    spec: z.object({ upTo: z.int().min(1).max(10) }),
    status: z.object({ count: z.int() }).partial(),
  });
}

const Tally = counting('Tally');

/** The same count, kept in its own status: the status writer's write, another role's. */
const Climb = counting('Climb');

/** Counted by one reconciler process after another: the next owner must see the last one's write. */
const Relay = counting('Relay');

/** Makes a ConfigMap, then deletes it: the reconcile after must not see it. */
const Sweep = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Sweep',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({ swept: z.boolean() }).partial(),
});

/** Counts in its status, one reconciler process after another, while the status writer is down. */
const Beacon = counting('Beacon');

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
    await environment.install(Relay);
    await environment.install(Sweep);
    await environment.install(Beacon);
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

  /** How many reconciles of `controller` the roles finished (their status intents published). */
  async function reconciled(roles: Roles, controller: string): Promise<number> {
    const counted = await roles.shell.registry
      .getSingleMetric('controller_runtime_reconcile_total')
      ?.get();
    return (counted?.values ?? [])
      .filter((v) => v.labels['controller'] === controller)
      .reduce((sum, v) => sum + v.value, 0);
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

  it("a restarted reconciler sees the previous one's last write while the bus is behind it", async () => {
    const seen: { by: string; count: number }[] = [];
    const counts: number[] = [];
    const watcher: { roles?: Roles } = {};
    // each process its own operator: the same definition, as a restart runs it
    const relay = (by: string) =>
      defineOperator({
        name: 'relay',
        for: Relay,
        owns: [kinds.ConfigMap],
        // the first process's hand-over reconciles apply nothing: that must not prune the count
        prune: false,
        async reconcile(object, ctx) {
          const name = `${object.metadata.name}-count`;
          const count = Number((await ctx.get(kinds.ConfigMap, name))?.data?.['count'] ?? '0');
          // the first process hands over at 2, however late it is stopped: the next goes on
          if (by === 'first' && count >= 2) return { status: { count }, requeueAfterMs: 1_000 };
          seen.push({ by, count });
          counts.push(count);
          if (count >= object.spec.upTo) return { status: { count } };
          // from the second write on, nothing the operator writes reaches the bus
          if (count === 1) await watcher.roles?.stop();
          await ctx.apply(kinds.ConfigMap, {
            metadata: { name },
            data: { count: String(count + 1) },
          });
          // the next reconcile comes from the work queue; after the second write, late
          // enough for the first process to be stopped and the next one started
          return { status: { count }, requeueAfterMs: count + 1 === 2 ? 5_000 : 100 };
        },
      });
    watcher.roles = await start(relay('first'), ['watcher']);
    const first = await start(relay('first'), ['reconciler', 'status-writer']);
    await environment.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Relay',
      metadata: { name: 'r', namespace: 'default' },
      spec: { upTo: 4 },
    });
    await waitFor(
      async () =>
        (await environment.get(kinds.ConfigMap, 'r-count', 'default'))?.data?.['count'] === '2',
      'the first process to write the count 2',
      90_000,
    );
    await first.stop();
    const next = await start(relay('next'), ['reconciler', 'status-writer']);
    await untilSeen(counts, 4);
    const byFirst = seen.filter(({ by }) => by === 'first').map(({ count }) => count);
    const byNext = seen.filter(({ by }) => by === 'next').map(({ count }) => count);
    // the next process began where the first left off, not at the count the bus still had
    assert.equal(
      byNext[0],
      Math.max(...byFirst) + 1,
      `the first saw ${byFirst.join(', ')}; the next ${byNext.join(', ')}`,
    );
    const fellBack = await staleReads(next, 'relay', 'fell_back');
    assert.ok(fellBack.total >= 1, `fell_back ${fellBack.total}: ${fellBack.all}`);
  });

  it('a reconcile does not see what it deleted while the bus is behind it', async () => {
    const seen: string[] = [];
    const watcher: { roles?: Roles } = {};
    let deleted = false;
    /** how many reconciles saw it before the deletion */
    let before = 0;
    const operator = defineOperator({
      name: 'sweep',
      for: Sweep,
      owns: [kinds.ConfigMap],
      async reconcile(sweep, ctx) {
        const name = `${sweep.metadata.name}-litter`;
        const litter = await ctx.get(kinds.ConfigMap, name);
        seen.push(litter === undefined ? 'absent' : 'present');
        if (deleted) return { status: { swept: litter === undefined } };
        if (litter === undefined) {
          await ctx.apply(kinds.ConfigMap, { metadata: { name }, data: { made: 'yes' } });
          return { requeueAfterMs: 100 };
        }
        // the deletion never reaches the bus: it still records the ConfigMap
        await watcher.roles?.stop();
        assert.equal(await ctx.delete(kinds.ConfigMap, name), 'deleted');
        deleted = true;
        before = seen.length;
        return { requeueAfterMs: 100 };
      },
    });
    watcher.roles = await start(operator, ['watcher']);
    const reconciler = await start(operator, ['reconciler', 'status-writer']);
    await environment.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Sweep',
      metadata: { name: 's', namespace: 'default' },
      spec: {},
    });
    await waitFor(() => deleted && seen.length > before, 'a reconcile after the deletion', 90_000);
    // made, seen, deleted: the reconcile after the deletion did not see it
    assert.equal(seen[before], 'absent', `the reconciles saw ${seen.join(', ')}`);
    const fellBack = await staleReads(reconciler, 'sweep', 'fell_back');
    assert.ok(fellBack.total >= 1, `fell_back ${fellBack.total}: ${fellBack.all}`);
  });

  it('a restarted reconciler sees the status the previous one returned while the writer is down', async () => {
    const seen: { by: string; count: number }[] = [];
    const counts: number[] = [];
    const writer: { roles?: Roles } = {};
    const beacon = (by: string) =>
      defineOperator({
        name: 'beacon',
        for: Beacon,
        async reconcile(object) {
          const count = object.status?.count ?? 0;
          // the first process hands over at 2, however late it is stopped: the next goes on
          if (by === 'first' && count >= 2) return { status: { count }, requeueAfterMs: 1_000 };
          seen.push({ by, count });
          counts.push(count);
          if (count >= object.spec.upTo) return { status: { count } };
          // from the second status on, nothing is written: the intents stay pending
          if (count === 1) await writer.roles?.stop();
          // after the second, late enough for the first process to be stopped and the next started
          return { status: { count: count + 1 }, requeueAfterMs: count + 1 === 2 ? 5_000 : 100 };
        },
      });
    await start(beacon('first'), ['watcher']);
    writer.roles = await start(beacon('first'), ['status-writer']);
    const first = await start(beacon('first'), ['reconciler']);
    await environment.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Beacon',
      metadata: { name: 'b', namespace: 'default' },
      spec: { upTo: 4 },
    });
    const byFirst = () => seen.filter(({ by }) => by === 'first').map(({ count }) => count);
    // every reconcile of the first process finished, the one that saw 1 among them: its intent is out
    await waitFor(
      async () => byFirst().includes(1) && (await reconciled(first, 'beacon')) >= byFirst().length,
      'the first process to return the count 2',
      90_000,
    );
    await first.stop();
    const next = await start(beacon('next'), ['reconciler']);
    await untilSeen(counts, 4);
    const byNext = seen.filter(({ by }) => by === 'next').map(({ count }) => count);
    // the next process began at the status the first returned last, not the one still written
    assert.equal(
      byNext[0],
      Math.max(...byFirst()) + 1,
      `the first saw ${byFirst().join(', ')}; the next ${byNext.join(', ')}`,
    );
    const own = await staleReads(next, 'beacon', 'own_status');
    assert.ok(own.total >= 1, `own_status ${own.total}: ${own.all}`);
  });
});
