// The watcher process: the only place that reads the environment and signals.
import { connectBus } from '@kubebus/shared/bus';
import { configOrExit, kubeConfigOrExit, orExit } from '@kubebus/shared/config';
import { gracefulShutdown, startServiceShell } from '@kubebus/shared/obs';
import { WatcherConfigSchema } from './config.js';
import { startWatcher } from './watcher.js';

const config = configOrExit('watcher', WatcherConfigSchema, process.env);
const kubeConfig = await kubeConfigOrExit('watcher', config.kubeconfig, process.env);

const shell = await startServiceShell({
  service: 'watcher',
  logLevel: config.logLevel,
  health: config.health,
  tracing: config.tracing,
});
const { log } = shell;

const bus = await orExit(
  'watcher',
  connectBus({ ...config.nats, name: `kubebus-watcher-${config.watcherId}` }, log),
);
const watcher = await orExit(
  'watcher',
  startWatcher({ config, kubeConfig, bus, log, registry: shell.registry, spans: shell.spans }),
);
shell.checks.live('watch-loops', () => watcher.live());
shell.checks.ready('watcher', () => watcher.ready());
shell.started();

const shutdown = gracefulShutdown(log, [
  () => watcher.stop(),
  () => bus.nc.drain(),
  () => shell.flushSpans(),
  () => shell.health.close(),
]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    shutdown(signal);
  });
