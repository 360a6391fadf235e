// The watcher process: the only place that reads the environment and signals.
import { connectBus } from '@kubebus/shared/bus';
import { loadConfig } from '@kubebus/shared/config';
import { gracefulShutdown, startServiceShell } from '@kubebus/shared/obs';
import { loadKubeConfig } from '@kubebus/shared/kube';
import { WatcherConfigSchema } from './config.js';
import { startWatcher } from './watcher.js';

let config;
try {
  config = loadConfig(WatcherConfigSchema, process.env);
} catch (error) {
  process.stderr.write(`kubebus watcher: ${(error as Error).message}\n`);
  process.exit(2);
}

const shell = await startServiceShell({
  service: 'watcher',
  logLevel: config.logLevel,
  health: config.health,
});
const { log } = shell;
const kubeConfig = loadKubeConfig(config.kubeconfig);

const bus = await connectBus({ ...config.nats, name: `kubebus-watcher-${config.watcherId}` }, log);
const watcher = await startWatcher({ config, kubeConfig, bus, log, registry: shell.registry });
shell.checks.live('watch-loops', () => watcher.live());
shell.checks.ready('watcher', () => watcher.ready());
shell.started();

const shutdown = gracefulShutdown(log, [
  () => watcher.stop(),
  () => bus.nc.drain(),
  () => shell.health.close(),
]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    shutdown(signal);
  });
