// kubebus replay <operator> <namespace/name>: the operator re-run over the
// object's recorded history, as a dry run.
import { loadConfig } from '@kubebus/shared/config';
import { loadKubeConfig } from '@kubebus/shared/kube';
import { createLogger } from '@kubebus/shared/obs';
import {
  OperatorReconciler,
  ReplayEnvSchema,
  formatReplay,
  replay,
  type ReplayEnv,
} from '@kubebus/reconciler/service';
import { connect } from '@nats-io/transport-node';
import { operatorArgument, usageError, type CommandLine } from './commands.js';

const USAGE =
  'kubebus replay <operator.ts|.js> <namespace/name | name> [--from <seq>] [--to <seq>] [--json]';

/** A revision sequence from --from/--to, or exit 2. */
function sequenceOption(line: CommandLine, name: string): number | undefined {
  const value = line.values[name];
  if (value === undefined) return undefined;
  const seq = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(seq) || seq < 1)
    return usageError(`--${name} takes a revision's sequence number (kubebus history shows them)`);
  return seq;
}

export async function replayCommand(line: CommandLine): Promise<void> {
  const from = sequenceOption(line, 'from');
  const to = sequenceOption(line, 'to');
  const target = line.positionals[1];
  if (target === undefined) usageError(`missing the object: ${USAGE}`);
  const operator = await operatorArgument(line, USAGE);
  const namespaced = operator.for.scope === 'Namespaced';
  const [namespace, name] = target.includes('/') ? target.split('/', 2) : ['', target];
  if (namespaced && namespace === '')
    usageError(`${operator.for.kind} is namespaced: give <namespace/name>`);
  let env: ReplayEnv;
  try {
    env = loadConfig(ReplayEnvSchema, process.env);
  } catch (error) {
    return usageError((error as Error).message);
  }
  const nc = await connect({
    servers: env.KUBEBUS_NATS_URL.split(','),
    ...(env.KUBEBUS_NATS_USER === undefined ? {} : { user: env.KUBEBUS_NATS_USER }),
    ...(env.KUBEBUS_NATS_PASSWORD === undefined ? {} : { pass: env.KUBEBUS_NATS_PASSWORD }),
  }).catch((error: unknown) =>
    usageError(
      `cannot connect to NATS at ${env.KUBEBUS_NATS_URL}: ${(error as Error).message}; check KUBEBUS_NATS_URL and the user`,
    ),
  );
  try {
    const log = createLogger({ service: 'replay', level: env.KUBEBUS_LOG_LEVEL });
    const deps: unknown = await operator.setup?.({ nats: nc, streamReplicas: 1, log });
    const steps = await replay({
      nc,
      kubeConfig: await loadKubeConfig(env.KUBECONFIG, process.env),
      key: {
        group: operator.for.group,
        resource: operator.for.plural,
        namespace: namespaced ? (namespace ?? '') : '',
        name: name ?? '',
      },
      log,
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      build: (tools) => new OperatorReconciler(operator, { ...tools, deps, dryRun: true }),
    });
    process.stdout.write(
      line.values['json'] === true ? `${JSON.stringify(steps, null, 2)}\n` : formatReplay(steps),
    );
    if (steps.some((step) => step.differences.length > 0)) process.exitCode = 1;
  } catch (error) {
    process.stderr.write(
      `kubebus: replay failed: ${(error as Error).message.split('\n')[0] ?? ''}\n`,
    );
    process.exitCode = 1;
  } finally {
    await nc.close();
  }
}
