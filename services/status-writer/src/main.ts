// The status writer process: the only place that reads the environment and signals.
import { connectBus } from '@kubebus/shared/bus';
import { configOrExit, kubeConfigOrExit, orExit } from '@kubebus/shared/config';
import { gracefulShutdown, startServiceShell } from '@kubebus/shared/obs';
import { hostname } from 'node:os';
import { StatusWriterConfigSchema } from './config.js';
import { startStatusWriter } from './status-writer.js';

const config = configOrExit('status-writer', StatusWriterConfigSchema, {
  // each replica needs its own id: the host name is one (the pod or container name)
  KUBEBUS_REPLICA_ID: hostname().replace(/[^-_a-zA-Z0-9]/g, '-'),
  ...process.env,
});
const kubeConfig = await kubeConfigOrExit('status-writer', config.kubeconfig, process.env);

const shell = await startServiceShell({
  service: 'status-writer',
  logLevel: config.logLevel,
  health: config.health,
  tracing: config.tracing,
});
const { log } = shell;

const bus = await orExit(
  'status-writer',
  connectBus({ ...config.nats, name: `kubebus-status-writer-${config.replicaId}` }, log),
);
const writer = await orExit(
  'status-writer',
  startStatusWriter({ config, kubeConfig, bus, log, registry: shell.registry, spans: shell.spans }),
);
shell.checks.ready('status-writer', () => writer.ready());
shell.started();

const shutdown = gracefulShutdown(log, [
  () => writer.stop(),
  () => bus.nc.drain(),
  () => shell.flushSpans(),
  () => shell.health.close(),
]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    shutdown(signal);
  });
