// `npm run bench -- --n 1000 --rounds 2`: each system on a fresh test bed,
// alternating systems per round; per phase (create N DatabaseClusters, then
// change replicas 3 → 5 on all) the wall time to convergence, p50/p99 per
// object, the apiserver's own request counts, TLS connections, CPU and peak
// RSS of the system's processes — and ratios against the references measured
// in the same run (the ceiling, Go controller-runtime). Tests never assert
// timings; this prints them.
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { parseArgs } from 'node:util';
import { TestBed } from '../test/bed/testbed.js';
import { installDatabaseClusterCrd } from '../test/support/pipeline.js';
import {
  apiserverRequests,
  difference,
  summarize,
  type RequestCounts,
} from './apiserver-requests.js';
import { Observer } from './observer.js';
import { procStats } from './proc-stats.js';
import { SYSTEMS, startSystem, type SystemName } from './systems.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '1' },
    systems: { type: 'string', default: 'ceiling,controller-runtime,kubebus' },
    workers: { type: 'string', default: '8' },
    qps: { type: 'string', default: '200' },
    reconcilers: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '900' },
    /** seconds to watch objects that can never converge (0: skip that phase) */
    'failing-window': { type: 'string', default: '60' },
    /** a directory for V8 CPU profiles of kubebus' processes (read them with bench/profile-top.ts) */
    profile: { type: 'string' },
    /** extra node flags for kubebus' processes, space-separated (e.g. --node-flags=--max-semi-space-size=2) */
    'node-flags': { type: 'string' },
  },
});
const N = Number(values.n);
const systems = values.systems.split(',') as SystemName[];
for (const system of systems) {
  if (!SYSTEMS.includes(system)) {
    process.stderr.write(`bench: no system ${system} (systems: ${SYSTEMS.join(', ')})\n`);
    process.exit(2);
  }
}
const options = {
  workers: Number(values.workers),
  qps: Number(values.qps),
  reconcilers: Number(values.reconcilers),
  ...(values.profile === undefined ? {} : { profileDir: values.profile }),
  ...(values['node-flags'] === undefined
    ? {}
    : { nodeFlags: values['node-flags'].split(' ').filter((flag) => flag !== '') }),
};
const REFERENCES: readonly SystemName[] = ['ceiling', 'controller-runtime'];
/** the longest a phase waits for the apiserver to go quiet after the last object converged */
const SETTLE_MS = 120_000;
const NAMESPACES = ['bench-a', 'bench-b', 'bench-c', 'bench-d'];
const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface Phase {
  readonly wallSeconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly converged: number;
  readonly requests: RequestCounts;
  /** the slowest objects, "ns/name seconds" */
  readonly slowest: string[];
}
interface Run {
  readonly system: SystemName;
  readonly create: Phase;
  readonly update: Phase;
  /** apiserver requests spent on FAILING objects that never converge, in the window */
  readonly failing: RequestCounts;
  readonly cpuSeconds: number;
  readonly peakRssMb: number;
  /** resident set once ready, before any object: the floor the processes start from */
  readonly idleRssMb: number;
  readonly connections: number;
  readonly perProcess: { role: string; cpuSeconds: number; peakRssMb: number }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

async function phase(
  bed: TestBed,
  observer: Observer,
  expect: { replicas: number; generation: number },
  send: (name: string, namespace: string) => Promise<unknown>,
): Promise<Phase> {
  const before = await apiserverRequests(bed);
  observer.expect(expect);
  const sentAt = new Map<string, number>();
  const names = Array.from({ length: N }, (_, i) => ({
    name: `db-${String(i).padStart(5, '0')}`,
    namespace: NAMESPACES[i % NAMESPACES.length] ?? 'bench-a',
  }));
  const started = performance.now();
  const queue = [...names];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        sentAt.set(`${next.namespace}/${next.name}`, performance.now());
        await send(next.name, next.namespace);
      }
    }),
  );
  const deadline = Date.now() + Number(values.timeout) * 1_000;
  while (observer.convergedAt.size < N && Date.now() < deadline) await sleep(100);
  const last = Math.max(...observer.convergedAt.values());
  // The phase ends when the apiserver has seen no request from anyone for 3 s
  // (so trailing no-op reconciles count) — or, for a system that never goes
  // quiet, after SETTLE_MS, said on stderr.
  let settled = await apiserverRequests(bed);
  for (const settleUntil = Date.now() + SETTLE_MS; ;) {
    await sleep(3_000);
    const now = await apiserverRequests(bed);
    const more = summarize(difference(now, settled));
    settled = now;
    if (more.writes + more.gets === 0) break;
    if (Date.now() > settleUntil) {
      process.stderr.write(`  still sending requests ${SETTLE_MS / 1_000} s after converging\n`);
      break;
    }
  }
  const requests = difference(settled, before);
  // Subtract the driver's own writes.
  const own = expect.generation === 1 ? 'POST databaseclusters 201' : 'PATCH databaseclusters 200';
  requests.set(own, (requests.get(own) ?? 0) - N);
  const byObject = [...observer.convergedAt].map(([key, at]) => ({
    key,
    ms: at - (sentAt.get(key) ?? at),
  }));
  const latencies = byObject.map((o) => o.ms).sort((a, b) => a - b);
  const slowest = byObject
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3)
    .map((o) => `${o.key} ${(o.ms / 1_000).toFixed(1)}s`);
  return {
    wallSeconds: (last - started) / 1_000,
    p50: quantile(latencies, 0.5) / 1_000,
    p99: quantile(latencies, 0.99) / 1_000,
    converged: observer.convergedAt.size,
    requests,
    slowest,
  };
}

const FAILING = 5;
const FAILING_NAMESPACE = 'bench-failing';

/**
 * Objects that can never converge — a ResourceQuota allows no StatefulSet in
 * their namespace, so every reconcile fails at the apiserver — watched for a
 * fixed window: the requests each system spends retrying them (its backoff,
 * and when it gives up).
 */
async function failingPhase(
  bed: TestBed,
  create: (name: string, namespace: string) => Promise<unknown>,
): Promise<RequestCounts> {
  const windowMs = Number(values['failing-window']) * 1_000;
  if (windowMs <= 0) return new Map();
  const core = bed.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: FAILING_NAMESPACE } } });
  await core.createNamespacedResourceQuota({
    namespace: FAILING_NAMESPACE,
    body: {
      metadata: { name: 'no-statefulsets' },
      spec: { hard: { 'count/statefulsets.apps': '0' } },
    },
  });
  // the quota controller is not running: give the quota the status it would, or
  // admission ignores a quota whose status does not list the resource
  await core.replaceNamespacedResourceQuotaStatus({
    namespace: FAILING_NAMESPACE,
    name: 'no-statefulsets',
    body: {
      metadata: { name: 'no-statefulsets', namespace: FAILING_NAMESPACE },
      spec: { hard: { 'count/statefulsets.apps': '0' } },
      status: {
        hard: { 'count/statefulsets.apps': '0' },
        used: { 'count/statefulsets.apps': '0' },
      },
    },
  });
  const before = await apiserverRequests(bed);
  for (let i = 0; i < FAILING; i++) await create(`failing-${i}`, FAILING_NAMESPACE);
  await sleep(windowMs); // the measurement is what happens in this window
  const requests = difference(await apiserverRequests(bed), before);
  requests.set(
    'POST databaseclusters 201',
    (requests.get('POST databaseclusters 201') ?? 0) - FAILING,
  );
  return requests;
}

async function runOnce(system: SystemName): Promise<Run> {
  const bed = await TestBed.start();
  try {
    await installDatabaseClusterCrd(bed);
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of NAMESPACES) await core.createNamespace({ body: { metadata: { name } } });
    const running = await startSystem(system, bed, options);
    const idleRssMb = procStats(running.processes().flatMap((p) => p.pids)).rssMb;
    const observer = new Observer(bed.kubeConfig());
    observer.start();
    try {
      const custom = bed.kubeConfig().makeApiClient(CustomObjectsApi);
      const createCluster = (name: string, namespace: string) =>
        custom.createNamespacedCustomObject({
          ...target,
          namespace,
          body: {
            apiVersion: `${target.group}/${target.version}`,
            kind: 'DatabaseCluster',
            metadata: { name },
            spec: { engine: 'postgres', version: '16', replicas: 3, storage: { size: '1Gi' } },
          },
        });
      const create = await phase(bed, observer, { replicas: 3, generation: 1 }, createCluster);
      const update = await phase(bed, observer, { replicas: 5, generation: 2 }, (name, namespace) =>
        custom.patchNamespacedCustomObject(
          { ...target, namespace, name, body: { spec: { replicas: 5 } } },
          mergePatch,
        ),
      );
      const processes = running.processes();
      const stats = procStats(processes.flatMap((p) => p.pids));
      const perProcess = processes.map((p) => ({ role: p.role, ...procStats(p.pids) }));
      const failing = await failingPhase(bed, createCluster);
      return {
        system,
        create,
        update,
        failing,
        ...stats,
        idleRssMb,
        perProcess,
        connections: await running.connections(),
      };
    } finally {
      observer.stop();
      await running.stop();
    }
  } finally {
    await bed.stop();
  }
}

const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;

function report(runs: Run[]): string {
  const rows: string[][] = [];
  const per = (s: SystemName, f: (r: Run) => number) =>
    median(runs.filter((r) => r.system === s).map(f));
  const metrics: [string, (r: Run) => number, number][] = [
    ['create wall s', (r) => r.create.wallSeconds, 2],
    ['create p50 s', (r) => r.create.p50, 2],
    ['create p99 s', (r) => r.create.p99, 2],
    ['update wall s', (r) => r.update.wallSeconds, 2],
    ['update p50 s', (r) => r.update.p50, 2],
    ['update p99 s', (r) => r.update.p99, 2],
    ['writes / created object', (r) => summarize(r.create.requests).writes / N, 2],
    ['GETs / created object', (r) => summarize(r.create.requests).gets / N, 2],
    ['writes / updated object', (r) => summarize(r.update.requests).writes / N, 2],
    ['GETs / updated object', (r) => summarize(r.update.requests).gets / N, 2],
    [
      `writes / never-converging object in ${values['failing-window']} s`,
      (r) => summarize(r.failing).writes / FAILING,
      1,
    ],
    ['TLS connections / object', (r) => r.connections / N, 3],
    ['CPU s / object (both phases)', (r) => r.cpuSeconds / N, 4],
    ['CPU s total', (r) => r.cpuSeconds, 1],
    ['peak RSS MB (sum of processes)', (r) => r.peakRssMb, 0],
    ['RSS MB once ready, no objects', (r) => r.idleRssMb, 0],
  ];
  const present = systems.filter((s) => runs.some((r) => r.system === s));
  // a ratio column for every other system against every reference that ran
  const ratios = REFERENCES.filter((ref) => present.includes(ref)).flatMap((ref) =>
    present.filter((s) => s !== ref).map((s) => [s, ref] as const),
  );
  rows.push(['metric', ...present, ...ratios.map(([s, ref]) => `${s} / ${ref}`)]);
  for (const [label, f, digits] of metrics) {
    rows.push([
      label,
      ...present.map((s) => per(s, f).toFixed(digits)),
      ...ratios.map(([s, ref]) => {
        const reference = per(ref, f);
        return reference > 0 ? `${(per(s, f) / reference).toFixed(2)}×` : '–';
      }),
    ]);
  }
  const table = [rows[0] ?? [], (rows[0] ?? []).map(() => '---'), ...rows.slice(1)]
    .map((r) => `| ${r.join(' | ')} |`)
    .join('\n');
  const detail = runs
    .map((r) => {
      const lines = (label: string, counts: RequestCounts) =>
        `  ${label}: ${[...counts]
          .filter(([, n]) => n !== 0)
          .sort()
          .map(([id, n]) => `${id}=${n}`)
          .join(', ')}`;
      const processes = r.perProcess
        .map((p) => `${p.role} ${p.cpuSeconds.toFixed(1)} CPU s, ${p.peakRssMb.toFixed(0)} MB`)
        .join('; ');
      return `${r.system} (converged ${r.create.converged}/${N}, ${r.update.converged}/${N}): ${processes}\n${lines('create', r.create.requests)}\n${lines('update', r.update.requests)}\n${lines('never converging', r.failing)}\n  slowest: create ${r.create.slowest.join(', ')}; update ${r.update.slowest.join(', ')}`;
    })
    .join('\n');
  return `N=${N}, workers=${options.workers}, qps=${options.qps}, reconcilers=${options.reconcilers}, rounds=${values.rounds}\n\n${table}\n\napiserver requests by verb, resource and code:\n${detail}\n`;
}

const runs: Run[] = [];
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const system of systems) {
    process.stderr.write(`round ${round}: ${system} ...\n`);
    const run = await runOnce(system);
    const processes = run.perProcess
      .map((p) => `${p.role} ${p.cpuSeconds.toFixed(1)} CPU s, ${p.peakRssMb.toFixed(0)} MB`)
      .join('; ');
    process.stderr.write(
      `  create ${run.create.wallSeconds.toFixed(1)} s, update ${run.update.wallSeconds.toFixed(1)} s, ${run.cpuSeconds.toFixed(1)} CPU s; ${processes}\n`,
    );
    runs.push(run);
  }
}
process.stdout.write(report(runs));
