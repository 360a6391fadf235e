// Runs an operator's roles in this process: all three by default (the
// small-footprint mode), or one of them per process in production. The roles
// of one process share one NATS connection, one apiserver client (one HTTP/2
// connection and one client-side throttle, as a controller-runtime manager
// does) and one health server.
import { arch, platform } from 'node:os';
import { Gauge } from 'prom-client';
import {
  connectBus,
  serverAtLeast,
  type BusConnection,
  type InProcessStatusWriter,
} from '@kubebus/shared/bus';
import { KubeClient, PerResourceThrottle, type KubeCredentials } from '@kubebus/shared/kube';
import { restClientMetrics, type Logger, type ServiceShell } from '@kubebus/shared/obs';
import type { Environment } from '@kubebus/shared/config';
import {
  operatorPlan,
  startReconcilerService,
  type ReconcilerConfig,
} from '@kubebus/reconciler/service';
import {
  startStatusWriter,
  type IntentTaken,
  type StatusWriterConfig,
} from '@kubebus/status-writer/service';
import { startWatcher, type WatcherConfig } from '@kubebus/watcher/service';
import type { Operator } from '@kubebus/shared/definition';
import { reconcilerConfig, statusWriterConfig, watcherConfig, type Role } from './role-configs.js';
import { startConversionWebhook } from './conversion-webhook.js';
import type { WebhookConfig } from './webhook-config.js';

export interface RunningOperator {
  readonly bus: BusConnection;
  stop(): Promise<void>;
}

/** Every role's typed configuration, parsed before anything connects. */
export interface RoleConfigs {
  readonly watcher?: WatcherConfig;
  readonly reconciler?: ReconcilerConfig;
  readonly statusWriter?: StatusWriterConfig;
}

/** Parses the roles' configurations; throws a readable message on a bad variable. */
export function roleConfigsOf(
  operator: Operator,
  roles: readonly Role[],
  env: Environment,
  replicaId: string,
): RoleConfigs {
  return {
    ...(roles.includes('watcher') ? { watcher: watcherConfig(operator, env) } : {}),
    ...(roles.includes('reconciler')
      ? { reconciler: reconcilerConfig(operator, env, replicaId) }
      : {}),
    ...(roles.includes('status-writer')
      ? { statusWriter: statusWriterConfig(operator, env, replicaId) }
      : {}),
  };
}

export async function runOperator(options: {
  readonly operator: Operator;
  readonly roles: readonly Role[];
  readonly configs: RoleConfigs;
  readonly replicaId: string;
  readonly kubeConfig: KubeCredentials;
  readonly shell: ServiceShell;
  /** kubebus' version, for the User-Agent */
  readonly version: string;
  /** the operator's own version: a new one reconciles every object again (upgrade sweep) */
  readonly operatorVersion?: string;
  /** where the conversion webhook is served, for a resource in several versions; absent: not served */
  readonly webhook?: WebhookConfig;
  /** the status writer's hold point (`kubebus test` only) */
  readonly statusIntentTaken?: IntentTaken;
}): Promise<RunningOperator> {
  const { operator, roles, configs, shell } = options;
  const log: Logger = shell.log;
  const first = configs.reconciler ?? configs.statusWriter ?? configs.watcher;
  if (first === undefined) throw new Error('no role to run');
  const { nats, kubeRate } = first;
  const kube = kubeClientOf(options, kubeRate, roles, log);
  const clients = [kube];
  const stops: (() => Promise<void>)[] = [];
  const versioned = operator.for.versions.length > 1;
  if (configs.reconciler !== undefined && versioned && options.webhook === undefined)
    // the test kit (and kubebus dev) on an existing cluster: the apiserver cannot reach this
    // process, and a self-signed webhook on every interface would serve no one
    log.info('not serving the conversion webhook: the cluster converts through its own');
  if (configs.reconciler !== undefined && versioned && options.webhook !== undefined) {
    // the reconciler role holds the code, and so the conversions; before NATS, first and closed
    // last: the apiserver needs it to read objects stored in another version, bus or no bus
    const { webhook } = options;
    const listening = await startConversionWebhook({
      ...webhook,
      resources: [operator.for],
      log: log.child({ component: 'conversion-webhook' }),
      registry: shell.registry,
    });
    log.info(
      { port: listening.port, versions: operator.for.versions.map((version) => version.name) },
      'serving the conversion webhook',
    );
    stops.push(() => listening.close());
  }
  const connection: { bus?: BusConnection } = {};
  watchBusHealth(() => connection.bus, shell);
  try {
    const bus = await connectBus(
      { ...nats, name: `kubebus-${operator.name}-${roles.join('+')}-${options.replicaId}` },
      log,
    );
    connection.bus = bus;
    const common = {
      kube,
      bus,
      registry: shell.registry,
      spans: shell.spans,
    };

    let statusWriter: InProcessStatusWriter | undefined;
    if (configs.statusWriter !== undefined) {
      const writer = await startStatusWriter({
        ...common,
        config: configs.statusWriter,
        log: log.child({ role: 'status-writer' }),
        ...(options.statusIntentTaken === undefined ? {} : { taken: options.statusIntentTaken }),
      });
      stops.push(() => writer.stop());
      // the reconciler beside it writes its statuses through it, inside each reconcile (ADR 0028)
      statusWriter = writer.inProcess;
    }
    if (configs.reconciler !== undefined) {
      const state = await stateConnectionOf(
        configs.reconciler,
        bus,
        operator.name,
        options.replicaId,
        log,
      );
      if (state !== bus) stops.push(() => state.nc.drain());
      const reconciler = await startReconcilerService({
        ...common,
        config: configs.reconciler,
        log: log.child({ role: 'reconciler' }),
        ...(statusWriter === undefined ? {} : { statusWriter }),
        ...(options.operatorVersion === undefined
          ? {}
          : { operatorVersion: options.operatorVersion }),
        plan: await operatorPlan(operator, {
          nats: state.nc,
          streamReplicas: configs.reconciler.streamReplicas,
          log: log.child({ role: 'reconciler' }),
        }),
      });
      stops.push(() => reconciler.stop());
    }
    if (configs.watcher !== undefined) {
      // beside other roles, the watches get a client (an HTTP/2 connection) of their own:
      // on the one that carries every write, watch events came seconds late (ADR 0033)
      const watchesKube =
        roles.length === 1 ? kube : kubeClientOf(options, kubeRate, ['watcher'], log);
      if (watchesKube !== kube) clients.push(watchesKube);
      const watcher = await startWatcher({
        ...common,
        kube: watchesKube,
        config: configs.watcher,
        log: log.child({ role: 'watcher' }),
      });
      shell.checks.live('watch-loops', () => watcher.live());
      shell.checks.ready('watcher', () => watcher.ready());
      stops.push(() => watcher.stop());
    }
    log.info(
      { operator: operator.name, roles, batchedReads: serverAtLeast(bus.nc, '2.11.0') },
      'operator running',
    );
    return {
      bus,
      async stop() {
        // the watcher first (no new work), the status writer last (it writes what reconciles produced)
        for (const stop of stops.reverse()) await stop();
        await bus.nc.drain();
        for (const client of clients) client.close();
      },
    };
  } catch (error) {
    // what started is stopped: the test kit and kubebus dev start again in this process
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await connection.bus?.nc.drain().catch(() => undefined);
    for (const client of clients) client.close();
    throw error;
  }
}

/**
 * The connection `setup` keeps external state on: the operator's own state
 * account when a user for it is configured (ADR 0015: streams it creates
 * there cannot republish into kubebus' subjects), else the process's own.
 */
async function stateConnectionOf(
  config: ReconcilerConfig,
  bus: BusConnection,
  operator: string,
  replicaId: string,
  log: Logger,
): Promise<BusConnection> {
  if (config.stateNats === undefined) return bus;
  const { user: _user, pass: _pass, passFile: _passFile, ...transport } = config.nats;
  return connectBus(
    { ...transport, ...config.stateNats, name: `kubebus-${operator}-state-${replicaId}` },
    log.child({ component: 'state-nats' }),
  );
}

/** client-go's shape: `kubebus/<version> (<os>/<arch>) <operator>/<roles>`. */
export function userAgentOf(version: string, operator: string, roles: readonly Role[]): string {
  const os = platform() === 'win32' ? 'windows' : platform();
  const cpu = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' }[arch()] ?? arch();
  const role = roles.length === 3 ? 'all' : roles.join('+');
  return `kubebus/${version} (${os}/${cpu}) ${operator}/${role}`;
}

/** One apiserver client: its HTTP/2 connection, its per-resource throttle, its User-Agent. */
function kubeClientOf(
  options: {
    readonly kubeConfig: KubeCredentials;
    readonly shell: ServiceShell;
    readonly version: string;
    readonly operator: Operator;
  },
  rate: { readonly qps: number; readonly burst: number },
  roles: readonly Role[],
  log: Logger,
): KubeClient {
  return new KubeClient(options.kubeConfig, restClientMetrics(options.shell.registry), {
    throttle: new PerResourceThrottle(rate.qps, rate.burst),
    userAgent: userAgentOf(options.version, options.operator.name, roles),
    log: log.child({ component: 'kube' }),
  });
}

/**
 * The bus' state on /metrics and /healthz, not /readyz (ADR 0036): every
 * replica shares the one NATS, so its outage made unready steers no work
 * elsewhere, while it takes the reconcilers, and so the conversion webhook,
 * out of their Service (every read of a versioned kind then fails). 0 from
 * the start, before the first connection (a refused password shows). A
 * connection closed for good fails liveness; a refused password does not
 * close it (it is retried, the file read again).
 */
function watchBusHealth(bus: () => BusConnection | undefined, shell: ServiceShell): void {
  new Gauge({
    name: 'kubebus_nats_connected',
    help: "1 while this process' NATS connection is up, 0 before it is made and while it is down.",
    registers: [shell.registry],
    collect() {
      this.set(bus()?.connected() === true ? 1 : 0);
    },
  });
  shell.checks.live(
    'nats',
    () => bus()?.nc.isClosed() !== true || 'the NATS connection was closed',
  );
}
