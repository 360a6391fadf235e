// One way to reach NATS and the apiserver for every command that does: the
// connection from the nats-CLI flags, a nats context or the environment
// (@kubebus/cli's connectionOf), the apiserver from KUBECONFIG when it is
// set, both closed when the command is done.
import {
  connectionOf,
  type BusContext,
  type CommandOutcome,
  type ConnectionFlags,
} from '@kubebus/cli/commands';
import {
  KubeClient,
  kubeconfigFiles,
  loadKubeConfig,
  type KubeCredentials,
} from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import type { ConnectionOptions, NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { outputFormatOf } from './bus-options.js';
import { cliEnv, type CliEnv } from './cli-env.js';
import { ExitCodes, type Exit, type Host } from './command-spec.js';
import { stringOption, usageError, type CommandLine } from './commands.js';

/** NATS could not be reached or refused the user: exit 1, not a usage error. */
export class CannotConnectError extends Error {
  override readonly name = 'CannotConnectError';
}

export function connectionFlagsOf(line: CommandLine): ConnectionFlags {
  return {
    server: stringOption(line, 'server'),
    user: stringOption(line, 'user'),
    password: stringOption(line, 'password'),
    creds: stringOption(line, 'creds'),
    context: stringOption(line, 'context'),
  };
}

/** Connects as the flags, context or environment say; `extra` tunes the client (timeouts). */
export async function connectNats(
  line: CommandLine,
  env: CliEnv,
  extra: Partial<ConnectionOptions> = {},
): Promise<NatsConnection> {
  const connection = connectionOf(connectionFlagsOf(line), env);
  try {
    return await connect({ ...connection.options, ...extra });
  } catch (error) {
    throw new CannotConnectError(
      `cannot connect to NATS at ${connection.url} (from ${connection.from}): ${(error as Error).message}; check the server and the user`,
      { cause: error },
    );
  }
}

/**
 * The kubeconfig as kubectl finds it: the files KUBECONFIG lists, else
 * ~/.kube/config, else the pod's service account.
 */
export async function kubeConfigOf(env: CliEnv, host: Host): Promise<KubeCredentials> {
  const files = kubeconfigFiles(host.env);
  if (env.KUBECONFIG !== undefined && env.KUBECONFIG !== '' && files.length === 0)
    usageError(
      `KUBECONFIG names ${env.KUBECONFIG}, which does not exist; point it at a kubeconfig file`,
    );
  try {
    return await loadKubeConfig(files.length === 0 ? undefined : files, host.env);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0] ?? '';
    return usageError(
      files.length === 0
        ? `no kubeconfig (${reason}); set KUBECONFIG to a kubeconfig file`
        : `cannot load the kubeconfig ${files.join(', ')} (${reason}); fix it, or point KUBECONFIG at another`,
    );
  }
}

/**
 * An apiserver client when KUBECONFIG is set (only then: a bus command must not
 * read some other cluster from ~/.kube/config); they work without one.
 */
async function kubeClientOf(env: CliEnv, host: Host): Promise<KubeClient | undefined> {
  if (env.KUBECONFIG === undefined) return undefined;
  return new KubeClient(await kubeConfigOf(env, host), restClientMetrics(new Registry()));
}

/** Runs a bus command: -o and the environment checked, then connected; closed afterwards. */
export async function withBus(
  line: CommandLine,
  host: Host,
  command: (context: BusContext) => Promise<CommandOutcome>,
): Promise<Exit> {
  const format = outputFormatOf(line);
  const env = cliEnv(host.env);
  const kube = await kubeClientOf(env, host);
  try {
    const nc = await connectNats(line, env);
    try {
      const outcome = await command({
        nc,
        kube,
        stdout: host.stdout,
        stderr: host.stderr,
        format,
      });
      return outcome === 'ok' ? ExitCodes.ok : ExitCodes.problem;
    } finally {
      await nc.close();
    }
  } finally {
    kube?.close();
  }
}
