// What a service's main.ts does before anything else, in one place: parse the
// environment (exit 2 with one line per bad variable), warn about KUBEBUS_*
// names no service reads (a misspelling is otherwise silently ignored), and
// load the kubeconfig (exit 2 with what to do when there is none).
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { kubeconfigFiles, loadKubeConfig, type KubeCredentials } from '../kube/kubeconfig.js';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import { loadConfig, type Environment } from './mod.js';

/** Every KUBEBUS_* variable some kubebus process reads (services, CLI, test bed, stack). */
export const KNOWN_VARIABLES = new Set([
  'KUBEBUS_NATS_URL',
  'KUBEBUS_NATS_USER',
  'KUBEBUS_NATS_PASSWORD',
  'KUBEBUS_NATS_PASSWORD_FILE',
  'KUBEBUS_NATS_CA',
  'KUBEBUS_NATS_CERT',
  'KUBEBUS_NATS_KEY',
  'KUBEBUS_HEALTH_PORT',
  'KUBEBUS_HEALTH_HOST',
  'KUBEBUS_METRICS_AUTH',
  'KUBEBUS_METRICS_HOST',
  'KUBEBUS_METRICS_PORT',
  'KUBEBUS_METRICS_CERT',
  'KUBEBUS_METRICS_KEY',
  'KUBEBUS_LOG_LEVEL',
  'KUBEBUS_QPS',
  'KUBEBUS_STREAM_REPLICAS',
  'KUBEBUS_BURST',
  'KUBEBUS_CONTROLLERS',
  'KUBEBUS_WATCH_NAMESPACES',
  'KUBEBUS_WATCH_LABEL_SELECTOR',
  'KUBEBUS_WORK_PARTITIONS',
  'KUBEBUS_STATUS_PARTITIONS',
  'KUBEBUS_RESYNC_PERIOD',
  'KUBEBUS_WATCH_INACTIVITY',
  'KUBEBUS_WATCH_TIMEOUT',
  'KUBEBUS_PUBLISH_MAX_IN_FLIGHT',
  'KUBEBUS_WATCHER_ID',
  'KUBEBUS_CURSOR_FLUSH',
  'KUBEBUS_LIST_PAGE_SIZE',
  'KUBEBUS_CONTROLLER',
  'KUBEBUS_MAX_CONCURRENT',
  'KUBEBUS_MAX_ATTEMPTS',
  'KUBEBUS_OBJECT_ATTEMPTS',
  'KUBEBUS_BACKOFF_BASE',
  'KUBEBUS_BACKOFF_CAP',
  'KUBEBUS_ACK_WAIT',
  'KUBEBUS_LEASE_RENEW',
  'KUBEBUS_REPLICA_ID',
  'KUBEBUS_FIELD_MANAGER',
  'KUBEBUS_HTTP_PORT',
  'KUBEBUS_HTTP_MAX_BYTES',
  'KUBEBUS_HTTP_HOST',
  'KUBEBUS_HTTP_AUTH',
  'KUBEBUS_HTTP_OIDC_AUDIENCE',
  'KUBEBUS_HTTP_OIDC_SUBJECTS',
  'KUBEBUS_HTTP_TOKEN_FILE',
  'KUBEBUS_HTTP_MAX_IN_FLIGHT',
  'KUBEBUS_HTTP_MAX_CONNECTIONS',
  'KUBEBUS_HTTP_HEADERS_TIMEOUT',
  'KUBEBUS_HTTP_REQUEST_TIMEOUT',
  'KUBEBUS_HTTP_KEEPALIVE_TIMEOUT',
  'KUBEBUS_CONSUME',
  'KUBEBUS_READ_YOUR_WRITES_WAIT',
  'KUBEBUS_ONCE_CLAIM_TIMEOUT',
  'KUBEBUS_CLAIM_RETRY',
  'KUBEBUS_ONCE_MAX_PER_OBJECT',
  'KUBEBUS_MAX_CRASHES',
  'KUBEBUS_HEAP_GROWTH_PERCENT',
  'KUBEBUS_MAX_SEMI_SPACE_MB',
  // kubebus run's conversion webhook (versioned resources)
  'KUBEBUS_WEBHOOK_HOST',
  'KUBEBUS_WEBHOOK_PORT',
  'KUBEBUS_WEBHOOK_CERT',
  'KUBEBUS_WEBHOOK_KEY',
  'KUBEBUS_WEBHOOK_MAX_BYTES',
  'KUBEBUS_STATE_NATS_USER',
  'KUBEBUS_STATE_NATS_PASSWORD',
  'KUBEBUS_STATE_NATS_PASSWORD_FILE',
  'KUBEBUS_CACHE',
  'KUBEBUS_KEEP_TESTBED',
  // read by the test bed behind `kubebus dev` and kubebus/testing (docs/configuration.md)
  'KUBEBUS_ASSETS',
  'KUBEBUS_NO_DOWNLOAD',
  'KUBEBUS_SERVER_SUMS',
  'KUBEBUS_ENVTEST_INDEX_URL',
  'KUBEBUS_NATS_RELEASES_URL',
  'KUBEBUS_KUBE_RELEASES_URL',
  'KUBEBUS_USE_EXISTING_CLUSTER',
  // read by the test tools behind `npm test` (test/bed/tools.ts)
  'KUBEBUS_TOOLS',
  'KUBEBUS_HELM_RELEASES_URL',
  'KUBEBUS_KUSTOMIZE_RELEASES_URL',
  'KUBEBUS_OPERATOR_VERSION',
]);

export function unknownVariables(env: Environment): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('KUBEBUS_') && !KNOWN_VARIABLES.has(name))
    .sort();
}

/** Parses the service's environment, or exits with status 2 and what is wrong. */
export function configOrExit<S extends z.ZodType>(
  service: string,
  schema: S,
  env: Environment,
): Readonly<z.output<S>> {
  for (const name of unknownVariables(env)) {
    process.stderr.write(
      `kubebus ${service}: warning: ${name} is not a kubebus variable (misspelt?); ignored\n`,
    );
  }
  try {
    return loadConfig(schema, env);
  } catch (error) {
    process.stderr.write(`kubebus ${service}: ${(error as Error).message}\n`);
    process.exit(2);
  }
}

/**
 * The kubeconfig the process runs with, by client-go's rules (KUBECONFIG, a
 * list; ~/.kube/config; the pod's service account), at its current context or
 * the one named; or exit 2 with one line saying what to do.
 */
export async function kubeConfigOrExit(
  service: string,
  path: string | undefined,
  env: Environment,
  options: { readonly context?: string } = {},
): Promise<KubeCredentials> {
  const inCluster =
    env['KUBERNETES_SERVICE_HOST'] !== undefined &&
    existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');
  const hint =
    'set KUBECONFIG to a readable kubeconfig file, or run in a pod with a service account';
  const files = kubeconfigFiles({ ...env, KUBECONFIG: path });
  if (path !== undefined && path !== '' && files.length === 0) {
    process.stderr.write(
      `kubebus ${service}: KUBECONFIG names ${path}, which does not exist: ${hint}\n`,
    );
    process.exit(2);
  }
  if (files.length === 0 && !inCluster) {
    process.stderr.write(`kubebus ${service}: no kubeconfig (nor ~/.kube/config): ${hint}\n`);
    process.exit(2);
  }
  try {
    const kc = await loadKubeConfig(files.length === 0 ? undefined : files, env, options);
    if (kc.getCurrentCluster() === null) throw new Error('it names no current cluster');
    return kc;
  } catch (error) {
    const message = (error as Error).message.split('\n')[0] ?? '';
    process.stderr.write(`kubebus ${service}: cannot load the kubeconfig (${message}): ${hint}\n`);
    process.exit(2);
  }
}

/** Awaits a start-up step; a configuration or server-version problem exits 2 with one line. */
export async function orExit<T>(service: string, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    if (error instanceof KubebusError && STARTUP_CODES.has(error.code)) {
      process.stderr.write(`kubebus ${service}: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

const STARTUP_CODES = new Set<string>([ErrorCodes.InvalidConfig, ErrorCodes.UnsupportedServer]);
