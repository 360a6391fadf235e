// The watcher process: the only place that reads the environment and signals.
import { connectBus } from '@kubebus/shared/bus';
import { loadConfig } from '@kubebus/shared/config';
import { HealthChecks, Registry, createLogger, startHealthServer } from '@kubebus/shared/obs';
import { KubeConfig } from '@kubernetes/client-node';
import { WatcherConfigSchema } from './config.js';
import { startWatcher, type RunningWatcher } from './watcher.js';

let config;
try {
  config = loadConfig(WatcherConfigSchema, process.env);
} catch (error) {
  process.stderr.write(`kubebus watcher: ${(error as Error).message}\n`);
  process.exit(2);
}

const log = createLogger({ service: 'watcher', level: config.logLevel });
const registry = new Registry();
const checks = new HealthChecks();
const health = await startHealthServer({ ...config.health, checks, registry });

const kubeConfig = new KubeConfig();
if (config.kubeconfig === undefined) kubeConfig.loadFromCluster();
else kubeConfig.loadFromFile(config.kubeconfig);

// Registered before anything starts, so /readyz is never vacuously true.
const started: { watcher?: RunningWatcher } = {};
checks.live('watch-loops', () => started.watcher?.live() ?? true);
checks.ready('watcher', () => started.watcher?.ready() ?? 'starting');

const bus = await connectBus({ ...config.nats, name: `kubebus-watcher-${config.watcherId}` }, log);
const watcher = await startWatcher({ config, kubeConfig, bus, log, registry });
started.watcher = watcher;
log.info({ healthPort: health.port }, 'serving /healthz, /readyz and /metrics');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  await watcher.stop();
  await bus.nc.drain();
  await health.close();
  log.flush();
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      },
    );
  });
}
