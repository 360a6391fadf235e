// kubebus version: this client's version, and the servers' when they can be
// reached (NATS from KUBEBUS_NATS_URL, the apiserver from KUBECONFIG), each on
// its own line; a server that cannot be reached says so and why.
import { loadKubeConfig, KubeClient } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { connect } from '@nats-io/transport-node';
import { VERSION } from './version.js';

const firstLine = (error: unknown) => ((error as Error).message.split('\n')[0] ?? '').slice(0, 200);

async function natsVersion(url: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const nc = await connect({
      servers: url.split(','),
      timeout: 3_000,
      maxReconnectAttempts: 0,
      ...(env['KUBEBUS_NATS_USER'] === undefined ? {} : { user: env['KUBEBUS_NATS_USER'] }),
      ...(env['KUBEBUS_NATS_PASSWORD'] === undefined ? {} : { pass: env['KUBEBUS_NATS_PASSWORD'] }),
    });
    const version = nc.info?.version ?? 'unknown';
    await nc.close();
    return `nats-server ${version} (${url})`;
  } catch (error) {
    return `nats-server unreachable at ${url}: ${firstLine(error)}`;
  }
}

async function apiserverVersion(kubeconfig: string | undefined, env: NodeJS.ProcessEnv) {
  try {
    const client = new KubeClient(
      await loadKubeConfig(kubeconfig, env),
      restClientMetrics(new Registry()),
    );
    const version = await client.request<{ gitVersion?: string }>('/version', { timeoutMs: 3_000 });
    return `kube-apiserver ${version.gitVersion ?? 'unknown'}`;
  } catch (error) {
    return `kube-apiserver unreachable: ${firstLine(error)}`;
  }
}

export async function versionCommand(env: NodeJS.ProcessEnv): Promise<void> {
  const lines = [`kubebus ${VERSION} (node ${process.version})`];
  const url = env['KUBEBUS_NATS_URL'];
  if (url !== undefined) lines.push(await natsVersion(url, env));
  if (env['KUBECONFIG'] !== undefined) lines.push(await apiserverVersion(env['KUBECONFIG'], env));
  process.stdout.write(`${lines.join('\n')}\n`);
  // the kube client keeps its connection open: this command is done
  process.exit(0);
}
