// kubebus version: this client's version, and the servers' when they can be
// reached (NATS as every bus command finds it, the apiserver from KUBECONFIG),
// each on its own line; a server that cannot be reached says so and why, and
// one kubebus cannot run on says what it lacks — either exits 1 (ExitCodes).
import { NoNatsServerError, connectionOf } from '@kubebus/cli/commands';
import { MIN_NATS_VERSION, serverAtLeast } from '@kubebus/shared/bus';
import { KubeClient } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { connectNats, connectionFlagsOf, kubeConfigOf } from './bus-session.js';
import { cliEnv, type CliEnv } from './cli-env.js';
import { ExitCodes, type CommandSpec, type Host } from './command-spec.js';
import type { CommandLine } from './commands.js';
import { CONNECTION } from './shared-options.js';
import { VERSION } from './version.js';

const firstLine = (error: unknown) => ((error as Error).message.split('\n')[0] ?? '').slice(0, 200);

/** The NATS line, and whether kubebus can run there (reached, recent, JetStream); none when nothing names a server. */
async function natsVersion(
  line: CommandLine,
  env: CliEnv,
): Promise<{ text: string; usable: boolean } | undefined> {
  let url: string;
  try {
    url = connectionOf(connectionFlagsOf(line), env).url;
  } catch (error) {
    if (error instanceof NoNatsServerError) return undefined;
    throw error;
  }
  try {
    const nc = await connectNats(line, env, { timeout: 3_000, maxReconnectAttempts: 0 });
    const version = nc.info?.version ?? 'unknown';
    const recent = serverAtLeast(nc, MIN_NATS_VERSION);
    const jetStream = nc.info?.jetstream === true;
    await nc.close();
    const problem = !recent
      ? `: too old, kubebus needs nats-server >= ${MIN_NATS_VERSION}`
      : !jetStream
        ? ': JetStream is off, kubebus needs it (-js, or jetstream {} in its configuration)'
        : '';
    return { text: `nats-server ${version} (${url})${problem}`, usable: problem === '' };
  } catch (error) {
    return { text: `nats-server unreachable at ${url}: ${firstLine(error)}`, usable: false };
  }
}

async function apiserverVersion(
  env: CliEnv,
  host: Host,
): Promise<{ text: string; usable: boolean }> {
  let client: KubeClient | undefined;
  try {
    client = new KubeClient(await kubeConfigOf(env, host), restClientMetrics(new Registry()));
    const version = await client.request<{ gitVersion?: string }>('/version', { timeoutMs: 3_000 });
    return {
      text: `kube-apiserver ${version.gitVersion ?? 'unknown'} (${client.server})`,
      usable: true,
    };
  } catch (error) {
    return { text: `kube-apiserver unreachable: ${firstLine(error)}`, usable: false };
  } finally {
    client?.close();
  }
}

export const VERSION_COMMAND: CommandSpec = {
  name: 'version',
  section: 'client',
  arguments: '',
  takes: { min: 0, max: 0 },
  summary: ["this client's version, and the NATS server's and apiserver's it is pointed at"],
  options: {},
  shared: [CONNECTION],
  run: async (line, host) => {
    const env = cliEnv(host.env);
    const lines = [`kubebus ${VERSION} (node ${process.version})`];
    const nats = await natsVersion(line, env);
    const apiserver = env.KUBECONFIG === undefined ? undefined : await apiserverVersion(env, host);
    for (const server of [nats, apiserver]) if (server !== undefined) lines.push(server.text);
    host.stdout.write(`${lines.join('\n')}\n`);
    // every line printed either way; a server not reached, or one kubebus cannot run on, fails a script
    return nats?.usable === false || apiserver?.usable === false ? ExitCodes.problem : ExitCodes.ok;
  },
};
