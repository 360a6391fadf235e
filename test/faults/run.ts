// `npm run faults [-- --n 200] [--only <text>] [--layout one]`: each fault
// against the real servers, on a fresh test bed, while a burst of
// DatabaseClusters is created for two reconcilers; then one table. Pass =
// every object converges, nothing is lost, no side effect happens twice,
// nothing is dead-lettered by a fault. `--layout one`: two `kubebus run`
// replicas of every role instead (the watcher's role is the first's, the
// status writer's the second's).
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import { parseArgs } from 'node:util';
import { TcpProxy } from '../bed/tcp-proxy.js';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd, type Layout } from '../support/pipeline.js';
import { TARGET, tally, type Tally } from './measure.js';
import { scenarios, type FaultContext, type Scenario } from './scenarios.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200' },
    only: { type: 'string' },
    'converge-timeout': { type: 'string', default: '300' },
    layout: { type: 'string', default: 'three' },
  },
});
if (values.layout !== 'three' && values.layout !== 'one')
  throw new Error(`--layout is three or one, not ${values.layout}`);
const LAYOUT: Layout = values.layout;
const N = Number(values.n);
const CONVERGE_TIMEOUT_MS = Number(values['converge-timeout']) * 1_000;
const NAMESPACE = 'faults';

interface Row {
  readonly fault: string;
  readonly objects: number;
  readonly result: Tally;
  readonly seconds: number;
}

async function runScenario(scenario: Scenario): Promise<Row> {
  const bed = await TestBed.start({ controllerManager: false });
  const nc = await connect({ servers: bed.natsUrl, maxReconnectAttempts: -1 });
  const pipeline = new Pipeline(bed, LAYOUT);
  const proxy = scenario.throughProxy === true ? await TcpProxy.start(bed.nats.port) : undefined;
  const via = proxy === undefined ? {} : { KUBEBUS_NATS_URL: proxy.url };
  try {
    await installDatabaseClusterCrd(bed);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const env = { KUBEBUS_LOG_LEVEL: 'info', ...via };
    const roles =
      LAYOUT === 'three' ? await threeKinds(pipeline, env) : await twoReplicas(pipeline, env);
    const count = Math.round(N * (scenario.scale ?? 1));
    const names = Array.from({ length: count }, (_, i) => `db-${String(i).padStart(5, '0')}`);
    let made = 0;
    const waiters: { fraction: number; resolve: () => void }[] = [];
    const started = Date.now();
    const creating = createAll(bed, names, () => {
      made++;
      for (const w of waiters.filter((w) => made >= w.fraction * count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
    const ctx: FaultContext = {
      bed,
      nc,
      pipeline,
      roles,
      ...(proxy === undefined ? {} : { proxy }),
      created: (fraction) =>
        made >= fraction * count
          ? Promise.resolve()
          : new Promise((resolve) => waiters.push({ fraction, resolve })),
    };
    await Promise.all([creating, scenario.inject(ctx)]);
    const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
    // The fault may still be healing (NATS recovering its streams): a tally
    // that cannot be read yet is tried again until the deadline.
    let result: Tally | undefined;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        result = await tally(bed, nc, NAMESPACE, names);
        if (result.notConverged.length === 0) break;
      } catch (error) {
        lastError = error;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    if (result === undefined) throw new Error(`could not read the outcome: ${String(lastError)}`);
    return {
      fault: scenario.name,
      objects: count,
      result,
      seconds: (Date.now() - started) / 1_000,
    };
  } finally {
    await proxy?.stop();
    await pipeline.stop().catch(() => undefined);
    await nc.close().catch(() => undefined);
    await bed.stop();
  }
}

async function threeKinds(pipeline: Pipeline, env: Record<string, string>) {
  return {
    watcher: await pipeline.watcher(env),
    reconcilers: [await pipeline.reconciler(env), await pipeline.reconciler(env)],
    writer: await pipeline.statusWriter(env),
  };
}

/** Two replicas of every role: each fault's victim is one of them. */
async function twoReplicas(pipeline: Pipeline, env: Record<string, string>) {
  const first = await pipeline.watcher(env);
  const second = await pipeline.reconciler(env);
  return { watcher: first, reconcilers: [first, second], writer: second };
}

/** Creates the objects, retrying through outages (the fault may hit the apiserver). */
async function createAll(bed: TestBed, names: readonly string[], onCreated: () => void) {
  const api = bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const queue = [...names];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        for (;;) {
          try {
            await api.createNamespacedCustomObject({
              ...TARGET,
              namespace: NAMESPACE,
              body: {
                apiVersion: `${TARGET.group}/${TARGET.version}`,
                kind: 'DatabaseCluster',
                metadata: { name },
                spec: { engine: 'postgres', version: '16', replicas: 1, storage: { size: '1Gi' } },
              },
            });
            break;
          } catch (error) {
            if ((error as { code?: number }).code === 409) break; // created before the outage
            await new Promise((r) => setTimeout(r, 500));
          }
        }
        onCreated();
      }
    }),
  );
}

function table(rows: readonly Row[]): string {
  const header = [
    'fault',
    'objects',
    'converged',
    'lost',
    'doubled',
    'dead-lettered',
    'poison parked',
    'seconds',
    'pass',
  ];
  const lines = rows.map((r) => {
    const pass =
      r.result.notConverged.length === 0 &&
      r.result.doubled.length === 0 &&
      r.result.deadLettered === 0;
    return [
      r.fault,
      String(r.objects),
      String(r.result.converged),
      String(r.result.notConverged.length),
      String(r.result.doubled.length),
      String(r.result.deadLettered),
      String(r.result.malformedParked),
      r.seconds.toFixed(0),
      pass ? 'yes' : 'NO',
    ];
  });
  const all = [header, header.map(() => '---'), ...lines];
  return `${all.map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`;
}

const selected = scenarios.filter((s) => values.only === undefined || s.name.includes(values.only));
const rows: Row[] = [];
for (const scenario of selected) {
  process.stderr.write(`fault: ${scenario.name} ...\n`);
  try {
    const row = await runScenario(scenario);
    rows.push(row);
    const { notConverged, doubled } = row.result;
    process.stderr.write(
      `  ${row.result.converged}/${row.objects} converged in ${row.seconds.toFixed(0)} s` +
        (notConverged.length ? `; lost: ${notConverged.slice(0, 5).join(', ')}` : '') +
        `${doubled.length ? `; doubled: ${doubled.slice(0, 5).join(', ')}` : ''}\n`,
    );
  } catch (error) {
    process.stderr.write(`  the run itself failed: ${(error as Error).message}\n`);
    rows.push({
      fault: `${scenario.name} (run failed)`,
      objects: 0,
      result: {
        converged: 0,
        notConverged: ['?'],
        doubled: [],
        deadLettered: 0,
        malformedParked: 0,
      },
      seconds: 0,
    });
  }
}
process.stdout.write(`\n${table(rows)}`);
const failed = rows.some(
  (r) =>
    r.result.notConverged.length > 0 || r.result.doubled.length > 0 || r.result.deadLettered > 0,
);
process.exit(failed ? 1 : 0);
