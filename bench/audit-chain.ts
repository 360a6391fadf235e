// Each object's first reconcile, request by request, as the apiserver saw it:
// `npm run bench -- --audit <dir>` runs every system's apiserver with an
// audit log (metadata only), and this reads one back. Server-side times for
// any system alike (controller-runtime's and kubebus' requests side by side),
// nothing added to the system under test. The audit costs the apiserver some
// CPU: walls of an audited run are not compared with unaudited ones.
//
//   node --import tsx bench/audit-chain.ts <dir>/<system>.log
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The apiserver flags that write `<dir>/<system>.log` (`<system>-2.log` for a second round, …). */
export function auditArgs(dir: string, system: string): string[] {
  mkdirSync(dir, { recursive: true });
  const policy = join(dir, 'policy.yaml');
  writeFileSync(
    policy,
    'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n',
  );
  return [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${unusedLog(dir, system)}`,
    // batched: the audit does not hold each request up
    '--audit-log-mode=batch',
    '--audit-log-maxsize=4000',
  ];
}

/** A round's own file: a later round's objects have the same names, and would mix with this one's. */
function unusedLog(dir: string, system: string): string {
  for (let round = 1; ; round++) {
    const path = join(dir, round === 1 ? `${system}.log` : `${system}-${round}.log`);
    if (!existsSync(path)) return path;
  }
}

export interface AuditEvent {
  readonly verb: string;
  readonly userAgent?: string;
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
  readonly objectRef?: { resource?: string; subresource?: string; name?: string };
}

export interface ChainStep {
  /** its place in the chain, from 0 */
  readonly index: number;
  readonly objects: number;
  /** mean ms from the object's first request to this one's arrival */
  readonly startMs: number;
  /** mean ms the apiserver took to answer */
  readonly handlerMs: number;
  /** the most frequent requests at this place: "verb resource" and how many */
  readonly requests: readonly (readonly [string, number])[];
}

export interface Chain {
  readonly operator: string;
  readonly objects: number;
  readonly requestsPerObject: number;
  /** mean ms from the driver's create to the operator's first request about the object */
  readonly queueMs: number;
  readonly steps: readonly ChainStep[];
}

const WRITES = new Set(['create', 'patch', 'update', 'delete']);

const ms = (timestamp: string) => Date.parse(timestamp) + micros(timestamp);
/** Date.parse keeps milliseconds; the audit log has microseconds */
const micros = (timestamp: string) => Number(`0.${/\.\d{3}(\d*)/.exec(timestamp)?.[1] ?? '0'}`);

/**
 * The operator (the user agent with the most writes, not the driver's empty
 * one nor Kubernetes' own; its last `/…` left out, so kubebus' roles in
 * separate processes count as one) and, per DatabaseCluster, its requests
 * naming the cluster or an object named after it, from its creation to the
 * driver's first change of its spec.
 */
export function firstReconcileChain(events: readonly AuditEvent[], maxSteps = 16): Chain {
  const writes = new Map<string, number>();
  for (const event of events) {
    const agent = operatorOf(event.userAgent ?? '');
    if (agent === '' || agent.startsWith('kube-') || !WRITES.has(event.verb)) continue;
    writes.set(agent, (writes.get(agent) ?? 0) + 1);
  }
  const operator = [...writes].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
  const created = new Map<string, number>();
  const changed = new Map<string, number>();
  for (const event of events) {
    const ref = event.objectRef;
    if ((event.userAgent ?? '') !== '' || ref?.resource !== 'databaseclusters') continue;
    if (ref.subresource !== undefined || ref.name === undefined) continue;
    if (event.verb === 'create') created.set(ref.name, ms(event.requestReceivedTimestamp));
    else if (event.verb === 'patch' || event.verb === 'update')
      if (!changed.has(ref.name)) changed.set(ref.name, ms(event.requestReceivedTimestamp));
  }
  const byCluster = new Map<string, { at: number; took: number; what: string }[]>();
  for (const event of events) {
    if (operatorOf(event.userAgent ?? '') !== operator) continue;
    if (event.verb === 'list' || event.verb === 'watch') continue;
    const cluster = clusterOf(event.objectRef?.name, created);
    if (cluster === undefined) continue;
    const at = ms(event.requestReceivedTimestamp);
    if (at >= (changed.get(cluster) ?? Infinity)) continue;
    const { resource = '', subresource } = event.objectRef ?? {};
    const what = `${event.verb} ${resource}${subresource === undefined ? '' : `/${subresource}`}`;
    const list = byCluster.get(cluster) ?? [];
    list.push({ at, took: ms(event.stageTimestamp) - at, what });
    byCluster.set(cluster, list);
  }
  const steps: { start: number[]; took: number[]; what: Map<string, number> }[] = [];
  const queue: number[] = [];
  let requests = 0;
  for (const [cluster, list] of byCluster) {
    list.sort((a, b) => a.at - b.at);
    requests += list.length;
    const first = list[0]?.at ?? 0;
    queue.push(first - (created.get(cluster) ?? first));
    list.slice(0, maxSteps).forEach((request, index) => {
      const step = (steps[index] ??= { start: [], took: [], what: new Map() });
      step.start.push(request.at - first);
      step.took.push(request.took);
      step.what.set(request.what, (step.what.get(request.what) ?? 0) + 1);
    });
  }
  return {
    operator,
    objects: byCluster.size,
    requestsPerObject: byCluster.size === 0 ? 0 : requests / byCluster.size,
    queueMs: mean(queue),
    steps: steps.map((step, index) => ({
      index,
      objects: step.start.length,
      startMs: mean(step.start),
      handlerMs: mean(step.took),
      requests: [...step.what].sort((a, b) => b[1] - a[1]).slice(0, 3),
    })),
  };
}

/** A user agent without its last `/…`: kubebus names the role there (`<operator>/<role>`). */
function operatorOf(agent: string): string {
  const slash = agent.lastIndexOf('/');
  return slash < 0 ? agent : agent.slice(0, slash);
}

/** The cluster an object is named after: its own name, or the name and a '-' or '.' suffix. */
function clusterOf(name: string | undefined, clusters: ReadonlyMap<string, number>) {
  if (name === undefined) return undefined;
  if (clusters.has(name)) return name;
  for (let end = name.length - 1; end > 0; end--) {
    const separator = name[end];
    if ((separator === '-' || separator === '.') && clusters.has(name.slice(0, end)))
      return name.slice(0, end);
  }
  return undefined;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function formatChain(chain: Chain): string {
  const lines = [
    `${chain.operator}: ${chain.objects} objects, ${chain.requestsPerObject.toFixed(2)} requests each before their spec changed; first request ${chain.queueMs.toFixed(0)} ms after the create (mean)`,
    '| request | objects | starts at ms (mean) | apiserver ms (mean) | which |',
    '| --- | --- | --- | --- | --- |',
    ...chain.steps.map(
      (step) =>
        `| ${step.index + 1} | ${step.objects} | ${step.startMs.toFixed(1)} | ${step.handlerMs.toFixed(1)} | ${step.requests.map(([what, count]) => `${what} ${count}`).join(', ')} |`,
    ),
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const path = process.argv[2];
  if (path === undefined) {
    process.stderr.write('usage: node --import tsx bench/audit-chain.ts <dir>/<system>.log\n');
    process.exit(2);
  }
  const events = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEvent);
  process.stdout.write(`${formatChain(firstReconcileChain(events))}\n`);
}
