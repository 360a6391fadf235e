// `npm run bench -- --n 1000 --rounds 2`: each system on a fresh test bed,
// alternating systems per round; per phase (create N DatabaseClusters, then
// change replicas 3 → 5 on all) the wall time to convergence, p50/p99 per
// object, the apiserver's own request counts, TLS connections, CPU and peak
// RSS of the system's processes — and ratios against the references measured
// in the same run (the ceiling, Go controller-runtime). Tests never assert
// timings; this prints them.
import { ContentTypes, KubeClient } from '@kubebus/shared/kube';
import { restClientMetrics } from '@kubebus/shared/obs';
import { CoreV1Api } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { parseArgs } from 'node:util';
import { TestBed } from '../test/bed/testbed.js';
import { installDatabaseClusterCrd } from '../test/support/pipeline.js';
import {
  apiserverRequests,
  difference,
  summarize,
  type RequestCounts,
} from './apiserver-requests.js';
import { stagesOf } from './breakdown.js';
import { readBusRecords } from './bus-records.js';
import { Observer } from './observer.js';
import { freePort } from '../test/bed/ports.js';
import { profileNats } from './nats-profile.js';
import { natsTraffic, trafficBetween, type NatsTraffic } from './nats-traffic.js';
import { machineBusySeconds, procStats, serverPid } from './proc-stats.js';
import { report, type Phase, type Run } from './report.js';
import { serverTimingsOf, timingsBetween, timingsOf, type Timings } from './request-times.js';
import { httpCall } from '../test/bed/http.js';
import { auditArgs } from './audit-chain.js';
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
    /** a directory for V8 CPU profiles of kubebus' processes (read them with bench/profile-top.ts) and nats-server's (go tool pprof -top) */
    profile: { type: 'string' },
    /** extra node flags for kubebus' processes, space-separated (e.g. --node-flags=--max-semi-space-size=2) */
    'node-flags': { type: 'string' },
    /** a directory for the apiserver's audit log of each system's run (read it with bench/audit-chain.ts) */
    audit: { type: 'string' },
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
const clusters = (namespace: string) =>
  `/apis/${target.group}/${target.version}/namespaces/${namespace}/${target.plural}`;

/** The harness' objects (../shared/bench-peers/driver/run.ts): a mix of engines, backups on two in three. */
function specOf(i: number): Record<string, unknown> {
  const mysql = i % 4 === 3;
  return {
    engine: mysql ? 'mysql' : 'postgres',
    version: mysql ? '8.4' : '16',
    replicas: 3,
    storage: { size: '10Gi' },
    ...(i % 3 === 2 ? {} : { backup: { schedule: '0 3 * * *', retentionDays: 14 } }),
  };
}
const names = Array.from({ length: N }, (_, i) => ({
  i,
  name: `db-${String(i).padStart(5, '0')}`,
  namespace: NAMESPACES[i % NAMESPACES.length] ?? 'bench-a',
}));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** the harness' quantile: the smallest value with at least q of all at or below it */
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;

/**
 * Waits until the apiserver has seen no request from anyone for 3 s (so
 * trailing no-op reconciles count), polling every second as the harness does;
 * a system that never goes quiet is given up on after `maxMs`, said on stderr.
 */
async function quiet(bed: TestBed, maxMs: number): Promise<RequestCounts> {
  const started = Date.now();
  let last = await apiserverRequests(bed);
  let lastChange = Date.now();
  for (;;) {
    await sleep(1_000);
    const now = await apiserverRequests(bed);
    const more = summarize(difference(now, last));
    last = now;
    if (more.writes + more.gets + more.lists > 0) lastChange = Date.now();
    if (Date.now() - lastChange >= 3_000) return now;
    if (Date.now() - started > maxMs) {
      process.stderr.write(`  still sending requests ${maxMs / 1_000} s after converging\n`);
      return now;
    }
  }
}

interface Meters {
  readonly cpu: () => Phase['cpu'];
  readonly reconciles: () => Promise<number>;
  readonly reconcileSeconds: () => Promise<number>;
  readonly staleReads: () => Promise<Map<string, number>>;
  readonly nats: () => Promise<NatsTraffic>;
  readonly requestTimes: () => Promise<{ client: Timings; server: Timings; driver: Timings }>;
}

async function phase(
  bed: TestBed,
  observer: Observer,
  meters: Meters,
  before: RequestCounts,
  expect: { replicas: number; generation: 1 | 2 },
  send: (i: number, name: string, namespace: string) => Promise<unknown>,
): Promise<{
  phase: Phase;
  sentAt: Map<string, number>;
  convergedAt: Map<string, number>;
  after: RequestCounts;
}> {
  const cpuBefore = meters.cpu();
  const natsBefore = await meters.nats();
  const reconcilesBefore = await meters.reconciles();
  const reconcileSecondsBefore = await meters.reconcileSeconds();
  const staleReadsBefore = await meters.staleReads();
  const timesBefore = await meters.requestTimes();
  observer.expect(expect);
  const sentAt = new Map<string, number>();
  const started = Date.now();
  const queue = [...names];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        sentAt.set(`${next.namespace}/${next.name}`, Date.now());
        await send(next.i, next.name, next.namespace);
      }
    }),
  );
  const sentSeconds = (Date.now() - started) / 1_000;
  const deadline = Date.now() + Number(values.timeout) * 1_000;
  while (observer.convergedAt.size < N && Date.now() < deadline) await sleep(100);
  const last = Math.max(...observer.convergedAt.values());
  const after = await quiet(bed, SETTLE_MS);
  const cpuAfter = meters.cpu();
  const nats = trafficBetween(natsBefore, await meters.nats());
  const timesAfter = await meters.requestTimes();
  const requests = difference(after, before);
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
    phase: {
      wallSeconds: (last - started) / 1_000,
      sentSeconds,
      p50: quantile(latencies, 0.5) / 1_000,
      p99: quantile(latencies, 0.99) / 1_000,
      converged: observer.convergedAt.size,
      requests,
      slowest,
      reconciles: (await meters.reconciles()) - reconcilesBefore,
      reconcileSeconds: (await meters.reconcileSeconds()) - reconcileSecondsBefore,
      staleReads: Object.fromEntries(
        [...(await meters.staleReads())]
          .map(([outcome, n]) => [outcome, n - (staleReadsBefore.get(outcome) ?? 0)] as const)
          .filter(([, n]) => n > 0),
      ),
      cpu: {
        system: cpuAfter.system - cpuBefore.system,
        nats: cpuAfter.nats - cpuBefore.nats,
        apiserver: cpuAfter.apiserver - cpuBefore.apiserver,
        other: cpuAfter.other - cpuBefore.other,
      },
      nats,
      requestTimes: {
        client: timingsBetween(timesAfter.client, timesBefore.client),
        server: timingsBetween(timesAfter.server, timesBefore.server),
        driver: timingsBetween(timesAfter.driver, timesBefore.driver),
      },
    },
    sentAt,
    convergedAt: new Map(observer.convergedAt),
    after,
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
  // kube-controller-manager runs, as in a cluster and in the harness: its
  // garbage collector and service-account controllers share the cores
  // with --profile, nats-server's own CPU profile too (Go's pprof on loopback)
  const profPort = values.profile === undefined ? undefined : await freePort();
  const bed = await TestBed.start({
    controllerManager: true,
    ...(values.audit === undefined ? {} : { apiserverArgs: auditArgs(values.audit, system) }),
    ...(profPort === undefined ? {} : { nats: { extraConfig: `prof_port: ${profPort}` } }),
  });
  try {
    await installDatabaseClusterCrd(bed);
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of NAMESPACES) await core.createNamespace({ body: { metadata: { name } } });
    // the controller manager's writes for the namespaces land before the baseline
    for (const namespace of NAMESPACES)
      await waitFor(() =>
        core.readNamespacedServiceAccount({ namespace, name: 'default' }).then(
          () => true,
          () => false,
        ),
      );
    const running = await startSystem(system, bed, options);
    const idleRssMb = procStats(running.processes().flatMap((p) => p.pids)).rssMb;
    const servers = {
      nats: serverPid('nats-server', bed.dir),
      apiserver: serverPid('kube-apiserver', bed.dir),
      etcd: serverPid('etcd', bed.dir),
      controllerManager: serverPid('kube-controller-manager', bed.dir),
    };
    const cpuOf = (pid: number | undefined) =>
      pid === undefined ? Number.NaN : procStats([pid]).cpuSeconds;
    // the driver's own requests, timed as kubebus times its own: the same wire
    // and apiserver, from a process that is not busy
    const driverMetrics = new Registry();
    const meters: Meters = {
      cpu: () => {
        const system = procStats(running.processes().flatMap((p) => p.pids)).cpuSeconds;
        const nats = cpuOf(servers.nats);
        const apiserver = cpuOf(servers.apiserver);
        const { user, system: kernel } = process.cpuUsage();
        const ours =
          system +
          nats +
          apiserver +
          cpuOf(servers.etcd) +
          cpuOf(servers.controllerManager) +
          (user + kernel) / 1e6;
        // what the rest of the machine (other tenants) used: the noise of the run
        return { system, nats, apiserver, other: machineBusySeconds() - ours };
      },
      reconciles: () => running.reconciles(),
      reconcileSeconds: () => running.reconcileSeconds(),
      staleReads: () => running.staleReads(),
      nats: () => natsTraffic(bed.nats.monitorPort),
      requestTimes: async () => ({
        client: await running.requestTimes(),
        driver: timingsOf(await driverMetrics.metrics(), 'rest_client_request_duration_seconds'),
        server: serverTimingsOf(
          (await httpCall(`${bed.apiserverUrl}/metrics`, { tls: bed.adminTls, timeoutMs: 30_000 }))
            .body,
        ),
      }),
    };
    const observer = new Observer(bed.kubeConfig());
    observer.start();
    try {
      // The driver's writes over one kept-alive HTTP/2 connection, as the
      // harness' driver keeps one alive: client-node opens a TLS connection
      // per request, which paced the creates (about 5 s for 300, against 1 s)
      // and loaded the apiserver the systems share.
      const driver = new KubeClient(bed.kubeConfig(), restClientMetrics(driverMetrics));
      const createCluster = (i: number, name: string, namespace: string) =>
        driver.request(clusters(namespace), {
          method: 'POST',
          body: {
            apiVersion: `${target.group}/${target.version}`,
            kind: 'DatabaseCluster',
            metadata: { name },
            spec: specOf(i),
          },
        });
      // the same pause for every system: initial lists and leases settle first
      await sleep(2_000);
      const baseline = await quiet(bed, 15_000);
      const natsProfiler =
        profPort === undefined || values.profile === undefined
          ? undefined
          : profileNats(profPort, values.profile, system);
      const create = await phase(
        bed,
        observer,
        meters,
        baseline,
        { replicas: 3, generation: 1 },
        createCluster,
      );
      const updateStarted = Date.now();
      const update = await phase(
        bed,
        observer,
        meters,
        create.after,
        { replicas: 5, generation: 2 },
        (_i, name, namespace) =>
          driver.request(`${clusters(namespace)}/${name}`, {
            method: 'PATCH',
            body: { spec: { replicas: 5 } },
            contentType: ContentTypes.merge,
          }),
      );
      await natsProfiler?.stop();
      const processes = running.processes();
      const stats = procStats(processes.flatMap((p) => p.pids));
      const perProcess = processes.map((p) => ({ role: p.role, ...procStats(p.pids) }));
      const stages = system.startsWith('kubebus')
        ? await readBusRecords(bed.natsUrl)
            .then((records) => ({
              create: stagesOf(
                {
                  generation: 1,
                  sentAt: create.sentAt,
                  convergedAt: create.convergedAt,
                  endsAt: updateStarted,
                },
                records,
                observer.sightings,
              ),
              update: stagesOf(
                {
                  generation: 2,
                  sentAt: update.sentAt,
                  convergedAt: update.convergedAt,
                  endsAt: Infinity,
                },
                records,
                observer.sightings,
              ),
            }))
            .catch((error: unknown) => {
              // the stage table is an extra: a run's figures are not lost with it
              process.stderr.write(`  no stage table: ${(error as Error).message}\n`);
              return undefined;
            })
        : undefined;
      const failing = await failingPhase(bed, (name, namespace) =>
        createCluster(0, name, namespace),
      );
      driver.close();
      return {
        system,
        create: { ...create.phase, ...(stages === undefined ? {} : { stages: stages.create }) },
        update: { ...update.phase, ...(stages === undefined ? {} : { stages: stages.update }) },
        failing,
        peakRssMb: stats.peakRssMb,
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

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition()); await sleep(200))
    if (Date.now() > deadline) throw new Error(`bench: no condition within ${timeoutMs} ms`);
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
      `  create ${run.create.wallSeconds.toFixed(1)} s, update ${run.update.wallSeconds.toFixed(1)} s, ${(run.create.cpu.system + run.update.cpu.system).toFixed(1)} CPU s (+ nats-server ${(run.create.cpu.nats + run.update.cpu.nats).toFixed(1)}); ${processes}\n`,
    );
    runs.push(run);
  }
}
process.stdout.write(
  report(runs, {
    n: N,
    systems,
    references: REFERENCES,
    failingWindow: values['failing-window'],
    failing: FAILING,
    header: `N=${N}, workers=${options.workers}, qps=${options.qps}, reconcilers=${options.reconcilers}, rounds=${values.rounds}; CPU from the baseline once the system is ready`,
  }),
);
