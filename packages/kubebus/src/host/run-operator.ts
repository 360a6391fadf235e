// Runs an operator's roles in this process: all three by default (the
// small-footprint mode: one NATS connection, one apiserver connection per
// role, one health server), or one of them per process in production.
import { connectBus, serverAtLeast, type BusConnection } from '@kubebus/shared/bus';
import type { KubeCredentials } from '@kubebus/shared/kube';
import type { Logger, ServiceShell } from '@kubebus/shared/obs';
import type { Environment } from '@kubebus/shared/config';
import { operatorPlan, startReconcilerService } from '@kubebus/reconciler/service';
import { startStatusWriter } from '@kubebus/status-writer/service';
import { startWatcher } from '@kubebus/watcher/service';
import type { Operator } from '../api/operator.js';
import { reconcilerConfig, statusWriterConfig, watcherConfig, type Role } from './role-configs.js';

export interface RunningOperator {
  readonly bus: BusConnection;
  stop(): Promise<void>;
}

export async function runOperator(options: {
  readonly operator: Operator;
  readonly roles: readonly Role[];
  readonly env: Environment;
  readonly replicaId: string;
  readonly kubeConfig: KubeCredentials;
  readonly shell: ServiceShell;
}): Promise<RunningOperator> {
  const { operator, roles, env, shell } = options;
  const log: Logger = shell.log;
  // parse every role's config before connecting: a bad variable is reported at once
  const configs = {
    watcher: roles.includes('watcher') ? watcherConfig(operator, env) : undefined,
    reconciler: roles.includes('reconciler')
      ? reconcilerConfig(operator, env, options.replicaId)
      : undefined,
    statusWriter: roles.includes('status-writer')
      ? statusWriterConfig(env, options.replicaId)
      : undefined,
  };
  const nats = (configs.reconciler ?? configs.statusWriter ?? configs.watcher)?.nats;
  if (nats === undefined) throw new Error('no role to run');
  const bus = await connectBus(
    { ...nats, name: `kubebus-${operator.name}-${roles.join('+')}-${options.replicaId}` },
    log,
  );
  const stops: (() => Promise<void>)[] = [];
  const common = {
    kubeConfig: options.kubeConfig,
    bus,
    registry: shell.registry,
    spans: shell.spans,
  };

  if (configs.statusWriter !== undefined) {
    const writer = await startStatusWriter({
      ...common,
      config: configs.statusWriter,
      log: log.child({ role: 'status-writer' }),
    });
    shell.checks.ready('status-writer', () => writer.ready());
    stops.push(() => writer.stop());
  }
  if (configs.reconciler !== undefined) {
    const reconciler = await startReconcilerService({
      ...common,
      config: configs.reconciler,
      log: log.child({ role: 'reconciler' }),
      plan: await operatorPlan(operator, {
        nats: bus.nc,
        streamReplicas: configs.reconciler.streamReplicas,
        log: log.child({ role: 'reconciler' }),
      }),
    });
    shell.checks.ready('reconciler', () => reconciler.ready());
    stops.push(() => reconciler.stop());
  }
  if (configs.watcher !== undefined) {
    const watcher = await startWatcher({
      ...common,
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
    },
  };
}
