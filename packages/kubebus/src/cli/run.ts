// kubebus run <operator> [--role ...]: the operator's roles in this process.
import { VERSION } from './version.js';
import { CommonEnv, commonConfig, configOrExit, kubeConfigOrExit } from '@kubebus/shared/config';
import { gracefulShutdown, startServiceShell } from '@kubebus/shared/obs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ROLES, derivedVariablesSet, type Role } from '../host/role-configs.js';
import { operatorArgument, usageError, type CommandLine } from './commands.js';

const USAGE = 'kubebus run <operator.ts|.js> [--role all|watcher|reconciler|status-writer]';

function rolesOf(value: string | boolean | undefined): readonly Role[] {
  if (value === undefined || value === 'all') return ROLES;
  const role = ROLES.find((known) => known === value);
  return role === undefined
    ? usageError(`--role must be all, ${ROLES.join(', ')}; got ${JSON.stringify(value)}`)
    : [role];
}

export async function run(line: CommandLine): Promise<void> {
  const roles = rolesOf(line.values['role']);
  // read (and bounded, by a restart) in main.ts; parsed here with the rest
  const { YoungGenerationEnv } = await import('../host/young-generation.js');
  if (line.positionals.length > 1)
    usageError(`unexpected argument "${line.positionals[1] ?? ''}": ${USAGE}`);
  const operator = await operatorArgument(line, USAGE);
  const { operatorVersionOf } = await import('../host/operator-version.js');
  const operatorVersion = operatorVersionOf(
    resolve(line.positionals[0] ?? ''),
    operator,
    process.env['KUBEBUS_OPERATOR_VERSION'],
  );
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of derivedVariablesSet(env)) {
    process.stderr.write(
      `kubebus: warning: ${name} is ignored: the operator definition decides it\n`,
    );
    env[name] = undefined;
  }
  const { WebhookEnv, webhookConfig } = await import('../host/webhook-config.js');
  const { HeapEnv, applyHeapGrowth } = await import('../host/heap-growth.js');
  // one parse: unknown variables are warned about once
  const settings = configOrExit(
    'run',
    z.object({
      ...CommonEnv,
      ...WebhookEnv.shape,
      ...HeapEnv.shape,
      ...YoungGenerationEnv.shape,
    }),
    env,
  );
  applyHeapGrowth(settings.KUBEBUS_HEAP_GROWTH_PERCENT, process.execArgv);
  const common = commonConfig(settings);
  let webhook: ReturnType<typeof webhookConfig>;
  try {
    webhook = webhookConfig(settings);
  } catch (error) {
    process.stderr.write(`kubebus run: ${(error as Error).message}\n`);
    process.exit(2);
  }
  // each replica needs its own id: the host name is one (the pod or container name)
  const replicaId = env['KUBEBUS_REPLICA_ID'] ?? hostname().replace(/[^-_a-zA-Z0-9]/g, '-');
  const { roleConfigsOf, runOperator } = await import('../host/run-operator.js');
  let configs: ReturnType<typeof roleConfigsOf>;
  try {
    // every role's variables are checked before anything connects: a bad one is reported at once
    configs = roleConfigsOf(operator, roles, env, replicaId);
  } catch (error) {
    process.stderr.write(`kubebus run: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const kubeConfig = await kubeConfigOrExit('run', common.kubeconfig, env);
  const { metricsServingOf } = await import('../host/metrics-serving.js');
  const { userAgentOf } = await import('../host/run-operator.js');
  let shell: Awaited<ReturnType<typeof startServiceShell>>;
  try {
    shell = await startServiceShell({
      // one role per process: its spans and logs say which (kubebus-<operator>-<role>)
      service: roles.length === 1 ? `${operator.name}-${roles[0] ?? ''}` : operator.name,
      logLevel: common.logLevel,
      health: common.health,
      metrics: metricsServingOf(
        common.metrics,
        kubeConfig,
        userAgentOf(VERSION, operator.name, roles),
      ),
      tracing: common.tracing,
      version: VERSION,
    });
  } catch (error) {
    process.stderr.write(`kubebus run: ${(error as Error).message}\n`);
    process.exit(2);
  }
  let running: Awaited<ReturnType<typeof runOperator>>;
  try {
    running = await runOperator({
      operator,
      roles,
      configs,
      replicaId,
      kubeConfig,
      shell,
      version: VERSION,
      operatorVersion,
      webhook,
    });
  } catch (error) {
    shell.log.flush();
    return usageError(`cannot start ${operator.name}: ${(error as Error).message}`);
  }
  shell.started();
  const shutdown = gracefulShutdown(shell.log, [
    () => running.stop(),
    () => shell.flushSpans(),
    () => shell.health.close(),
  ]);
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      shutdown(signal);
    });
}
