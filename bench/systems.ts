// The systems under bench, each started on a fresh test bed: kubebus's three
// services (or its one-process mode) from built JavaScript on plain node, as
// the image runs it; the ceiling's tight loop; the same operator on Go
// controller-runtime.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtBy } from '../test/bed/binaries.js';
import { httpCall } from '../test/bed/http.js';
import { freePort } from '../test/bed/ports.js';
import { ServerProcess } from '../test/bed/process.js';
import type { TestBed } from '../test/bed/testbed.js';
import { processTree } from './proc-stats.js';
import { timingsOf, type Timings } from './request-times.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export interface RunningSystem {
  /** the system's node processes by role, for CPU and RSS */
  processes(): { readonly role: string; readonly pids: number[] }[];
  /** connections opened to the apiserver so far */
  connections(): Promise<number>;
  /** reconciles of the DatabaseCluster controller so far (controller_runtime_reconcile_total) */
  reconciles(): Promise<number>;
  /** seconds its reconciles took so far (controller_runtime_reconcile_time_seconds_sum) */
  reconcileSeconds(): Promise<number>;
  /** kubebus' reads that did more than read, by outcome (kubebus_reconcile_stale_reads_total); none for the peers */
  staleReads(): Promise<Map<string, number>>;
  /** its apiserver requests' time as it saw them (rest_client_request_duration_seconds); none where not exported */
  requestTimes(): Promise<Timings>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  readonly workers: number;
  readonly qps: number;
  readonly reconcilers: number;
  /** write a V8 CPU profile of each kubebus process here */
  readonly profileDir?: string;
  /** extra node flags for kubebus' processes (to measure memory settings) */
  readonly nodeFlags?: readonly string[];
}

/** kubebus: a watcher, K reconcilers, a status writer; kubebus-one: all roles in one process */
export const SYSTEMS = [
  'kubebus',
  'kubebus-one',
  'ceiling',
  'controller-runtime',
  'informer',
] as const;
export type SystemName = (typeof SYSTEMS)[number];

export async function startSystem(
  name: SystemName,
  bed: TestBed,
  options: SystemOptions,
): Promise<RunningSystem> {
  switch (name) {
    case 'kubebus':
      return startKubebus(bed, options, 'services');
    case 'kubebus-one':
      return startKubebus(bed, options, 'one');
    case 'ceiling':
      return startCeiling(bed, options);
    case 'controller-runtime':
      return startControllerRuntime(bed, options);
    case 'informer':
      return startLoggingProcess(bed, 'informer', process.execPath, [await bundle('informer')], {
        BENCH_WORKERS: String(options.workers),
        BENCH_NATS_URL: bed.natsUrl,
      });
  }
}

interface Service {
  readonly role: string;
  readonly process: ServerProcess;
  readonly port: number;
}

/** The sum of a metric's series whose line starts with `name` (labels included, if given). */
async function metric(port: number, name: string): Promise<number> {
  const text = (await httpCall(`http://127.0.0.1:${port}/metrics`)).body;
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

/** A metric's series summed by the value of one label. */
async function metricBy(port: number, name: string, label: string): Promise<Map<string, number>> {
  const text = (await httpCall(`http://127.0.0.1:${port}/metrics`)).body;
  const by = new Map<string, number>();
  const value = new RegExp(`[{,]${label}="([^"]*)"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const key = value.exec(line)?.[1] ?? '';
    by.set(key, (by.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return by;
}

const NONE = () => Promise.resolve(new Map<string, number>());
const NO_TIMES = () => Promise.resolve<Timings>(new Map());

/** the DatabaseCluster controller's reconciles, under the same name in kubebus and controller-runtime */
const RECONCILES = 'controller_runtime_reconcile_total{controller="databasecluster"';
const RECONCILE_SECONDS =
  'controller_runtime_reconcile_time_seconds_sum{controller="databasecluster"';

async function startKubebus(
  bed: TestBed,
  options: SystemOptions,
  layout: 'services' | 'one',
): Promise<RunningSystem> {
  const common = {
    KUBECONFIG: bed.kubeconfigPath,
    KUBEBUS_NATS_URL: bed.natsUrl,
    KUBEBUS_HEALTH_HOST: '127.0.0.1',
    KUBEBUS_LOG_LEVEL: 'info',
    KUBEBUS_STATUS_PARTITIONS: '8',
    KUBEBUS_QPS: String(options.qps),
    KUBEBUS_BURST: String(options.qps * 2),
    KUBEBUS_MAX_CONCURRENT: String(options.workers),
    KUBEBUS_ACK_WAIT: '5s',
    KUBEBUS_LEASE_RENEW: '1s',
    KUBEBUS_BACKOFF_BASE: '100ms',
    KUBEBUS_BACKOFF_CAP: '1s',
    // the independent harness' setting (../shared/bench-peers/driver/systems.ts)
    KUBEBUS_CURSOR_FLUSH: '200ms',
  };
  const operator = join(root, 'dist', 'operators', 'databasecluster.js');
  // every layout is `kubebus run`; the definition decides the work partitions
  const start = async (
    service: string,
    env: Record<string, string>,
    args: readonly string[] = ['run', operator, '--role', service],
  ): Promise<Service> => {
    const port = await freePort();
    const process_ = ServerProcess.start({
      name: `${service}-${port}`,
      binary: process.execPath,
      args: [
        ...(options.nodeFlags ?? []),
        ...(options.profileDir === undefined
          ? []
          : [
              '--cpu-prof',
              `--cpu-prof-dir=${options.profileDir}`,
              `--cpu-prof-name=${service}-${port}.cpuprofile`,
            ]),
        join(root, 'dist', 'kubebus.js'),
        ...args,
      ],
      logFile: join(bed.dir, `bench-${service}-${port}.log`),
      env: { ...common, KUBEBUS_HEALTH_PORT: String(port), ...env },
    });
    await process_.waitReady(
      async () => (await httpCall(`http://127.0.0.1:${port}/readyz`)).status === 200,
      60_000,
    );
    return { role: service, process: process_, port };
  };
  const services: Service[] = [];
  if (layout === 'one') {
    services.push(await start('kubebus', { KUBEBUS_REPLICA_ID: 'kubebus-one' }, ['run', operator]));
  } else {
    services.push(await start('watcher', {}));
    for (let i = 0; i < options.reconcilers; i++)
      services.push(await start('reconciler', { KUBEBUS_REPLICA_ID: `reconciler-${i}` }));
    services.push(await start('status-writer', { KUBEBUS_REPLICA_ID: 'status-writer' }));
  }
  return {
    processes: () => services.map((s) => ({ role: s.role, pids: processTree(s.process.pid) })),
    connections: async () => {
      let total = 0;
      for (const s of services)
        total += await metric(s.port, 'kubebus_rest_client_connections_total');
      return total;
    },
    reconciles: async () => {
      let total = 0;
      for (const s of services)
        if (s.role !== 'status-writer') total += await metric(s.port, RECONCILES);
      return total;
    },
    reconcileSeconds: async () => {
      let total = 0;
      for (const s of services)
        if (s.role !== 'status-writer') total += await metric(s.port, RECONCILE_SECONDS);
      return total;
    },
    staleReads: async () => {
      const total = new Map<string, number>();
      for (const s of services)
        for (const [outcome, n] of await metricBy(
          s.port,
          'kubebus_reconcile_stale_reads_total',
          'outcome',
        ))
          total.set(outcome, (total.get(outcome) ?? 0) + n);
      return total;
    },
    requestTimes: async () => {
      const total: Timings = new Map();
      for (const s of services) {
        const text = (await httpCall(`http://127.0.0.1:${s.port}/metrics`)).body;
        for (const [verb, t] of timingsOf(text, 'rest_client_request_duration_seconds')) {
          const sum = total.get(verb) ?? { seconds: 0, count: 0 };
          total.set(verb, { seconds: sum.seconds + t.seconds, count: sum.count + t.count });
        }
      }
      return total;
    },
    stop: async () => {
      for (const s of services.reverse()) await s.process.stop();
    },
  };
}

/** bench/<name>.ts as one file beside the project's node_modules, so its packages resolve */
async function bundle(name: string): Promise<string> {
  const outfile = join(root, 'dist', `bench-${name}.js`);
  await build({
    entryPoints: [join(root, 'bench', `${name}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22.18',
    format: 'esm',
    conditions: ['source'],
    // third-party packages from node_modules; kubebus's own sources bundled in
    external: [
      '@kubernetes/client-node',
      '@nats-io/*',
      'prom-client',
      'pino',
      'zod',
      'yaml',
      'cloudevents',
    ],
    logLevel: 'warning',
  });
  return outfile;
}

async function startCeiling(bed: TestBed, options: SystemOptions): Promise<RunningSystem> {
  const outfile = await bundle('ceiling');
  return startLoggingProcess(bed, 'ceiling', process.execPath, [outfile], {
    BENCH_WORKERS: String(options.workers),
  });
}

async function startControllerRuntime(
  bed: TestBed,
  options: SystemOptions,
): Promise<RunningSystem> {
  const dir = builtBy(new URL('./controller-runtime/build.sh', import.meta.url), [
    'databasecluster-cr',
  ]);
  const metricsPort = await freePort();
  const system = await startLoggingProcess(
    bed,
    'controller-runtime',
    join(dir, 'databasecluster-cr'),
    [],
    {
      BENCH_WORKERS: String(options.workers),
      BENCH_QPS: String(options.qps),
      BENCH_NATS_URL: bed.natsUrl,
      BENCH_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
    },
  );
  return {
    ...system,
    reconciles: () => metric(metricsPort, RECONCILES),
    reconcileSeconds: () => metric(metricsPort, RECONCILE_SECONDS),
    staleReads: NONE,
    // timed by its transport as kubebus times its requests (controller-runtime/request_times.go)
    requestTimes: async () =>
      timingsOf(
        (await httpCall(`http://127.0.0.1:${metricsPort}/metrics`)).body,
        'rest_client_request_duration_seconds',
      ),
  };
}

/**
 * A one-process system that prints `ready` once it can work and, on SIGUSR2,
 * the connections it opened in kubebus' metric format.
 */
async function startLoggingProcess(
  bed: TestBed,
  role: string,
  binary: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<RunningSystem> {
  const logFile = join(bed.dir, `${role}.log`);
  const system = ServerProcess.start({
    name: role,
    binary,
    args,
    logFile,
    env: { KUBECONFIG: bed.kubeconfigPath, ...env },
  });
  await system.waitReady(async () => /^ready$/m.test(readFileSync(logFile, 'utf8')), 120_000);
  // the process itself, found by its comm: the binary's name cut to 15 characters
  const pids = () => processTree(system.pid, basename(binary).slice(0, 15));
  return {
    processes: () => [{ role, pids: pids() }],
    connections: async () => {
      const before = readFileSync(logFile, 'utf8').length;
      for (const pid of pids()) process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 50; i++) {
        const added = readFileSync(logFile, 'utf8').slice(before);
        const match = /kubebus_rest_client_connections_total\{[^}]*\} (\d+)/.exec(added);
        if (match) return Number(match[1]);
        await new Promise((r) => setTimeout(r, 100));
      }
      return Number.NaN;
    },
    reconciles: () => Promise.resolve(Number.NaN),
    reconcileSeconds: () => Promise.resolve(Number.NaN),
    staleReads: NONE,
    requestTimes: NO_TIMES,
    stop: () => system.stop(),
  };
}
