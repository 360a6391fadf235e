// Runs kubebus roles as real processes (so tests can SIGKILL them), with
// their logs in a file and their health endpoints on free ports. Every one is
// started as users start theirs: `kubebus run <operator module> --role <role>`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpCall } from '../bed/http.js';
import { freePort } from '../bed/ports.js';
import { ServerProcess } from '../bed/process.js';
import type { TestBed } from '../bed/testbed.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let counter = 0;

export type ServiceName = 'watcher' | 'reconciler' | 'status-writer';

/** The kubebus binary, from source. */
export const KUBEBUS_CLI = join(root, 'packages', 'kubebus', 'src', 'cli', 'main.ts');
/** The operator e2e tests run unless told otherwise. */
export const DATABASE_CLUSTER_OPERATOR = join(root, 'examples', 'databasecluster', 'operator.ts');
/** The Widget test kind as an operator (test/support/operators/widgets.ts). */
export const WIDGETS_OPERATOR = join(root, 'test', 'support', 'operators', 'widgets.ts');

/** The node arguments of `kubebus <args…>` run from source. */
export function kubebusArgs(...args: readonly string[]): string[] {
  return ['--conditions=source', '--import', 'tsx', KUBEBUS_CLI, ...args];
}

export class ServiceProcess {
  private constructor(
    readonly name: string,
    readonly healthPort: number,
    readonly process: ServerProcess,
  ) {}

  /** `kubebus run <operator> --role <role>` (the DatabaseCluster example by default). */
  static async start(
    bed: TestBed,
    role: ServiceName | 'all',
    env: Readonly<Record<string, string>>,
    options: { waitReady?: boolean; operator?: string } = {},
  ): Promise<ServiceProcess> {
    return ServiceProcess.launch(
      bed,
      role,
      kubebusArgs('run', options.operator ?? DATABASE_CLUSTER_OPERATOR, '--role', role),
      env,
      options,
    );
  }

  /** Any node program that serves kubebus' health endpoints (the kubebus binary, say). */
  static async launch(
    bed: TestBed,
    label: string,
    nodeArgs: readonly string[],
    env: Readonly<Record<string, string>>,
    options: { waitReady?: boolean; cwd?: string } = {},
  ): Promise<ServiceProcess> {
    const healthPort = await freePort();
    const name = `${label}-${++counter}`;
    const server = ServerProcess.start({
      name,
      binary: process.execPath,
      args: [...nodeArgs],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      logFile: join(bed.dir, `${name}.log`),
      env: {
        KUBECONFIG: bed.kubeconfigPath,
        KUBEBUS_NATS_URL: bed.natsUrl,
        KUBEBUS_HEALTH_HOST: '127.0.0.1',
        KUBEBUS_HEALTH_PORT: String(healthPort),
        KUBEBUS_LOG_LEVEL: 'debug',
        ...env,
      },
    });
    const running = new ServiceProcess(name, healthPort, server);
    if (options.waitReady !== false) await running.waitReady();
    return running;
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    await this.process.waitReady(async () => (await this.get('/readyz')).status === 200, timeoutMs);
  }

  get(path: string) {
    return httpCall(`http://127.0.0.1:${this.healthPort}${path}`);
  }

  /** The value of one metric series, 0 when absent. */
  async metric(name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
    const text = (await this.get('/metrics')).body;
    let total = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const match = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (match?.[1] !== name) continue;
      const series = match[2] ?? '';
      if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) {
        total += Number(match[3]);
      }
    }
    return total;
  }

  /** The JSON log lines written so far. */
  logs(): Record<string, unknown>[] {
    return readFileSync(this.process.spec.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  async stop(): Promise<void> {
    await this.process.stop();
  }

  async kill(): Promise<void> {
    await this.process.kill();
  }

  /** Freezes (SIGSTOP) or thaws (SIGCONT) the service: its connections stay open but go silent. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.process.killGroup(signal);
  }
}
