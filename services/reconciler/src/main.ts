// The reconciler process of the per-role images: the DatabaseCluster example
// operator's reconciler (`kubebus run <operator> --role reconciler` runs any
// operator). The only place that reads the environment and signals.
import { connectBus } from '@kubebus/shared/bus';
import { configOrExit, kubeConfigOrExit, orExit } from '@kubebus/shared/config';
import { gracefulShutdown, startServiceShell } from '@kubebus/shared/obs';
import { hostname } from 'node:os';
import { ReconcilerConfigSchema } from './config.js';
import databaseCluster from '../../../examples/databasecluster/operator.js';
import { operatorPlan } from './operator/operator-plan.js';
import { startReconcilerService } from './reconciler-service.js';

const config = configOrExit('reconciler', ReconcilerConfigSchema, {
  // each replica needs its own id: the host name is one (the pod or container name)
  KUBEBUS_REPLICA_ID: hostname().replace(/[^-_a-zA-Z0-9]/g, '-'),
  ...process.env,
});
const kubeConfig = await kubeConfigOrExit('reconciler', config.kubeconfig, process.env);

const shell = await startServiceShell({
  service: 'reconciler',
  logLevel: config.logLevel,
  health: config.health,
  tracing: config.tracing,
});
const { log } = shell;

const bus = await orExit(
  'reconciler',
  connectBus({ ...config.nats, name: `kubebus-reconciler-${config.replicaId}` }, log),
);
const reconciler = await orExit(
  'reconciler',
  startReconcilerService({
    config,
    kubeConfig,
    bus,
    log,
    registry: shell.registry,
    spans: shell.spans,
    plan: await operatorPlan(databaseCluster, {
      nats: bus.nc,
      streamReplicas: config.streamReplicas,
      log,
    }),
  }),
);
shell.checks.ready('reconciler', () => reconciler.ready());
shell.started();

const shutdown = gracefulShutdown(log, [
  () => reconciler.stop(),
  () => bus.nc.drain(),
  () => shell.flushSpans(),
  () => shell.health.close(),
]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    shutdown(signal);
  });
