// kubebus replay <operator> <namespace/name>: the operator re-run over the
// object's recorded history, as a dry run. It connects like every bus command
// (bus-session.ts): flags, nats context, or KUBEBUS_NATS_*.
import { machine, safeText } from '@kubebus/cli/commands';
import { parseDuration } from '@kubebus/shared/config';
import { createLogger } from '@kubebus/shared/obs';
import {
  OperatorReconciler,
  formatReplay,
  replay,
  replayDiverged,
} from '@kubebus/reconciler/service';
import { outputFormatOf } from './bus-options.js';
import { connectNats, kubeConfigOf } from './bus-session.js';
import { cliEnv } from './cli-env.js';
import { ExitCodes, type Exit, type Host } from './command-spec.js';
import { operatorArgument, stringOption, usageError, type CommandLine } from './commands.js';

const USAGE =
  'kubebus replay <operator.ts|.js> <namespace/name | name> [--from <seq>] [--to <seq>]';

/** A revision sequence from --from/--to. */
function sequenceOption(line: CommandLine, name: string): number | undefined {
  const value = stringOption(line, name);
  if (value === undefined) return undefined;
  const seq = Number(value);
  if (!Number.isInteger(seq) || seq < 1)
    return usageError(
      `--${name} "${value}" is not a revision's sequence number; kubebus history shows them`,
    );
  return seq;
}

export async function replayCommand(line: CommandLine, host: Host): Promise<Exit> {
  const from = sequenceOption(line, 'from');
  const to = sequenceOption(line, 'to');
  const format = outputFormatOf(line);
  const env = cliEnv(host.env);
  const target = line.positionals[1] ?? usageError(`missing the object; usage: ${USAGE}`);
  const operator = await operatorArgument(line, USAGE);
  const namespaced = operator.for.scope === 'Namespaced';
  const slash = target.indexOf('/');
  const [namespace, name] =
    slash < 0 ? ['', target] : [target.slice(0, slash), target.slice(slash + 1)];
  if (namespaced && namespace === '')
    usageError(`${operator.for.kind} is namespaced; give <namespace/name>`);
  const claimRetry = host.env['KUBEBUS_CLAIM_RETRY'];
  const claimRetryMs = claimRetry === undefined ? undefined : parseDuration(claimRetry);
  if (claimRetry !== undefined && (claimRetryMs === undefined || claimRetryMs < 1_000))
    usageError(`KUBEBUS_CLAIM_RETRY "${claimRetry}" is not a duration of at least 1s, like 30s`);
  const kubeConfig = await kubeConfigOf(env, host);
  const nc = await connectNats(line, env);
  try {
    const log = createLogger({ service: 'replay', level: env.KUBEBUS_LOG_LEVEL });
    const deps: unknown = await operator.setup?.({ nats: nc, streamReplicas: 1, log });
    const steps = await replay({
      nc,
      kubeConfig,
      key: {
        group: operator.for.group,
        resource: operator.for.plural,
        namespace: namespaced ? namespace : '',
        name,
      },
      log,
      controller: operator.name,
      versions: operator.for.versions.map((version) => version.name),
      // the manager the operator's reconcilers apply as (KUBEBUS_FIELD_MANAGER where it is set)
      fieldManager: host.env['KUBEBUS_FIELD_MANAGER'] ?? `kubebus-${operator.name}`,
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      // how often a refused name is looked at again, as the operator's reconcilers say it (KUBEBUS_CLAIM_RETRY)
      build: (tools) =>
        new OperatorReconciler(operator, {
          ...tools,
          deps,
          dryRun: true,
          ...(claimRetryMs === undefined ? {} : { claimRetryMs }),
        }),
    });
    // fields off the bus and the apiserver (annotations anyone may set): terminal-safe, as history's
    host.stdout.write(format === 'table' ? safeText(formatReplay(steps)) : machine(format, steps));
    return replayDiverged(steps) ? ExitCodes.problem : ExitCodes.ok;
  } finally {
    await nc.close();
  }
}
