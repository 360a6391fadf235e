// The bench's table: each metric per system (median over rounds) with ratios
// against the references that ran, the apiserver's requests per phase, and,
// for kubebus' systems, where each object's time went (breakdown.ts).
import { summarize, type RequestCounts } from './apiserver-requests.js';
import { formatStages, type Stages } from './breakdown.js';
import { formatTraffic, type NatsTraffic } from './nats-traffic.js';
import { formatTimings, type Timings } from './request-times.js';
import type { SystemName } from './systems.js';

export interface Phase {
  readonly wallSeconds: number;
  /** how long the driver took to send its N requests (16 at a time) */
  readonly sentSeconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly converged: number;
  readonly requests: RequestCounts;
  /** the slowest objects, "ns/name seconds" */
  readonly slowest: string[];
  /** reconciles of the DatabaseCluster controller in the phase */
  readonly reconciles: number;
  /** the seconds those reconciles took, summed: a worker's time per object */
  readonly reconcileSeconds: number;
  /** kubebus' reads that did more than read, by outcome (waited, fell_back, …) */
  readonly staleReads: Readonly<Record<string, number>>;
  /** CPU seconds in the phase: the system's processes, nats-server, kube-apiserver */
  readonly cpu: {
    readonly system: number;
    readonly nats: number;
    readonly apiserver: number;
    /** the rest of the machine meanwhile (other tenants): the run's noise */
    readonly other: number;
  };
  /** the bus' traffic in the phase (nats-server's monitoring) */
  readonly nats: NatsTraffic;
  /** apiserver requests' mean time by verb: the system's own view, the apiserver's (every client's) */
  readonly requestTimes: {
    readonly client: Timings;
    readonly server: Timings;
    /** the driver's (DatabaseCluster creates and patches), from a process that is not busy */
    readonly driver: Timings;
  };
  /** per stage, for kubebus' systems */
  readonly stages?: Stages;
}

export interface Run {
  readonly system: SystemName;
  readonly create: Phase;
  readonly update: Phase;
  /** apiserver requests spent on objects that never converge, in the window */
  readonly failing: RequestCounts;
  /** peak RSS of the system's processes (sum of each one's VmHWM) */
  readonly peakRssMb: number;
  /** resident set once ready, before any object: the floor the processes start from */
  readonly idleRssMb: number;
  readonly connections: number;
  readonly perProcess: { role: string; cpuSeconds: number; peakRssMb: number }[];
}

export interface ReportOptions {
  readonly n: number;
  readonly systems: readonly SystemName[];
  readonly references: readonly SystemName[];
  readonly failingWindow: string;
  readonly failing: number;
  readonly header: string;
}

const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;

const cpuBoth = (r: Run, f: (c: Phase['cpu']) => number) => f(r.create.cpu) + f(r.update.cpu);

export function report(runs: readonly Run[], o: ReportOptions): string {
  const N = o.n;
  const per = (s: SystemName, f: (r: Run) => number) =>
    median(runs.filter((r) => r.system === s).map(f));
  const metrics: [string, (r: Run) => number, number][] = [
    ['create: driver sent all in s', (r) => r.create.sentSeconds, 2],
    ['create wall s', (r) => r.create.wallSeconds, 2],
    ['create p50 s', (r) => r.create.p50, 2],
    ['create p99 s', (r) => r.create.p99, 2],
    ['update: driver sent all in s', (r) => r.update.sentSeconds, 2],
    ['update wall s', (r) => r.update.wallSeconds, 2],
    ['update p50 s', (r) => r.update.p50, 2],
    ['update p99 s', (r) => r.update.p99, 2],
    ['writes / created object', (r) => summarize(r.create.requests).writes / N, 2],
    ['GETs / created object', (r) => summarize(r.create.requests).gets / N, 2],
    ['writes / updated object', (r) => summarize(r.update.requests).writes / N, 2],
    ['GETs / updated object', (r) => summarize(r.update.requests).gets / N, 2],
    ['reconciles / created object', (r) => r.create.reconciles / N, 2],
    ['reconciles / updated object', (r) => r.update.reconciles / N, 2],
    [
      'mean reconcile ms, create',
      (r) => (1_000 * r.create.reconcileSeconds) / r.create.reconciles,
      1,
    ],
    [
      'mean reconcile ms, update',
      (r) => (1_000 * r.update.reconcileSeconds) / r.update.reconciles,
      1,
    ],
    [
      `writes / never-converging object in ${o.failingWindow} s`,
      (r) => summarize(r.failing).writes / o.failing,
      1,
    ],
    ['TLS connections / object', (r) => r.connections / N, 3],
    ['NATS messages in / created object', (r) => r.create.nats.inMsgs / N, 1],
    ['NATS messages out / created object', (r) => r.create.nats.outMsgs / N, 1],
    ['NATS messages in / updated object', (r) => r.update.nats.inMsgs / N, 1],
    ['NATS messages out / updated object', (r) => r.update.nats.outMsgs / N, 1],
    ['CPU s, system (both phases)', (r) => cpuBoth(r, (c) => c.system), 1],
    ['CPU s, nats-server (both phases)', (r) => cpuBoth(r, (c) => c.nats), 1],
    ['CPU s, system + nats-server', (r) => cpuBoth(r, (c) => c.system + c.nats), 1],
    ['CPU s, kube-apiserver (both phases)', (r) => cpuBoth(r, (c) => c.apiserver), 1],
    ['CPU s, rest of the machine (noise; create phase)', (r) => r.create.cpu.other, 1],
    ['CPU s, rest of the machine (noise; both phases)', (r) => cpuBoth(r, (c) => c.other), 1],
    ['peak RSS MB (sum of processes)', (r) => r.peakRssMb, 0],
    ['RSS MB once ready, no objects', (r) => r.idleRssMb, 0],
  ];
  const present = o.systems.filter((s) => runs.some((r) => r.system === s));
  // a ratio column for every other system against every reference that ran
  const ratios = o.references
    .filter((ref) => present.includes(ref))
    .flatMap((ref) => present.filter((s) => s !== ref).map((s) => [s, ref] as const));
  const rows: string[][] = [['metric', ...present, ...ratios.map(([s, ref]) => `${s} / ${ref}`)]];
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
      return `${r.system} (converged ${r.create.converged}/${N}, ${r.update.converged}/${N}): ${processes}\n${lines('create', r.create.requests)}\n${lines('update', r.update.requests)}\n${lines('never converging', r.failing)}\n  slowest: create ${r.create.slowest.join(', ')}; update ${r.update.slowest.join(', ')}\n  reads that did more than read (kubebus_reconcile_stale_reads_total), create: ${formatCounts(r.create.staleReads)}; update: ${formatCounts(r.update.staleReads)}\n  NATS per object, create: ${formatTraffic(r.create.nats, N)}\n  NATS per object, update: ${formatTraffic(r.update.nats, N)}\n  apiserver request time, mean, client / apiserver (requests), create: ${formatTimings(r.create.requestTimes.client, r.create.requestTimes.server)}\n  update: ${formatTimings(r.update.requestTimes.client, r.update.requestTimes.server)}\n  the driver's own requests, mean, create: ${formatTimings(r.create.requestTimes.driver, new Map())}; update: ${formatTimings(r.update.requestTimes.driver, new Map())}`;
    })
    .join('\n');
  const breakdowns = runs
    .flatMap((r) =>
      (['create', 'update'] as const).flatMap((phase) => {
        const stages = r[phase].stages;
        return stages === undefined
          ? []
          : [
              `${r.system}, ${phase} (ms; stages 4x are seen by the driver's watches):\n${formatStages(stages)}`,
            ];
      }),
    )
    .join('\n\n');
  return `${o.header}\n\n${table}\n\napiserver requests by verb, resource and code:\n${detail}\n${breakdowns === '' ? '' : `\nwhere each object's time goes, from the bus' records and the driver's watches:\n\n${breakdowns}\n`}`;
}

function formatCounts(counts: Readonly<Record<string, number>>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([name, n]) => `${name} ${n}`).join(', ');
}
