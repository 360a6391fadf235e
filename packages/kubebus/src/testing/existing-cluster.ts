// An existing cluster as the test environment's apiserver: the kubeconfig
// found by client-go's rules (KUBECONFIG, a list; ~/.kube/config), at its
// current context or the one named, asked for /version to see that it
// answers. NATS is the one named, else a nats-server started here, with TLS
// (a CA made for this run) and one user whose password is made for this run.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import {
  KubeClient,
  kubeconfigFiles,
  loadKubeConfig,
  type KubeCredentials,
} from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { loopbackTls, natsConfig, natsUrl, startNats } from '../../../../test/bed/nats.js';
import { loopbackCredentials } from '../../../../test/bed/nats-credentials.js';
import { createCa } from '../../../../test/bed/pki.js';
import { devStoreDir, holdStore } from './dev-nats-store.js';
import type { KeptNatsStore, Servers } from './servers.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ExistingClusterOptions {
  /** a kubeconfig file or a KUBECONFIG list (default: KUBECONFIG, else ~/.kube/config) */
  readonly kubeconfig?: string;
  /** the context to use (default: the current one) */
  readonly context?: string;
  /** the NATS to use (default: KUBEBUS_NATS_URL, else a nats-server started here) */
  readonly natsUrl?: string;
  /** keep the started nats-server's data and log after stop() */
  readonly keepDir?: boolean;
  /** keep the started nats-server's JetStream store across runs, one per cluster and this operator (kubebus dev) */
  readonly keepNatsStore?: { readonly operator: string };
}

export type Probe =
  | {
      readonly answers: true;
      readonly files: readonly string[];
      readonly context: string;
      readonly server: string;
      readonly credentials: KubeCredentials;
      /** the kube-system namespace's uid: which cluster this is, whatever its URL (unset: not readable) */
      readonly clusterId?: string;
    }
  | { readonly answers: false; readonly reason: string };

/** The context the merged files name current (client-go: the first file that sets one). */
function currentContextOf(files: readonly string[]): string | undefined {
  for (const file of files) {
    const parsed = parse(readFileSync(file, 'utf8')) as { 'current-context'?: unknown } | null;
    const current = parsed?.['current-context'];
    if (typeof current === 'string' && current !== '') return current;
  }
  return undefined;
}

/** Whether the kubeconfig names a cluster that answers; failure as data, one line. */
export async function probeExistingCluster(
  options: ExistingClusterOptions,
  env: Env,
  timeoutMs = 5_000,
): Promise<Probe> {
  const listed = options.kubeconfig ?? env['KUBECONFIG'];
  const files = kubeconfigFiles({ KUBECONFIG: listed, HOME: env['HOME'] });
  if (files.length === 0)
    return {
      answers: false,
      reason:
        listed === undefined || listed === ''
          ? 'no kubeconfig (KUBECONFIG is not set and there is no ~/.kube/config)'
          : `KUBECONFIG names ${listed}, which does not exist`,
    };
  let credentials: KubeCredentials;
  let context: string | undefined;
  try {
    context = options.context ?? currentContextOf(files);
    credentials = await loadKubeConfig(files, env, {
      ...(options.context === undefined ? {} : { context: options.context }),
    });
  } catch (error) {
    return {
      answers: false,
      reason: `the kubeconfig ${files.join(', ')} cannot be used (${firstLine(error)})`,
    };
  }
  const server = credentials.getCurrentCluster()?.server ?? '';
  const client = new KubeClient(credentials, restClientMetrics(new Registry()), { timeoutMs });
  let clusterId: string | undefined;
  try {
    await client.request('/version', { timeoutMs });
    // a cluster made anew at the same URL (kind, minikube, a reset) is another cluster
    clusterId = await client
      .getIfExists<{ metadata?: { uid?: string } }>('/api/v1/namespaces/kube-system')
      .then((namespace) => namespace?.metadata?.uid)
      .catch(() => undefined);
  } catch (error) {
    return {
      answers: false,
      reason: `the context ${context ?? ''} (${server}) does not answer (${firstLine(error)})`,
    };
  } finally {
    client.close();
  }
  return {
    answers: true,
    files,
    context: context ?? '',
    server,
    credentials,
    ...(clusterId === undefined ? {} : { clusterId }),
  };
}

/** The existing cluster, and NATS beside it; one line saying what to do when it does not answer. */
export async function connectExistingCluster(
  options: ExistingClusterOptions,
  env: Env,
): Promise<Servers> {
  const probe = await probeExistingCluster(options, env);
  if (!probe.answers)
    throw new Error(
      `cannot use an existing cluster: ${probe.reason}; start it, pick another with a context, or use the local servers`,
    );
  const named = options.natsUrl ?? env['KUBEBUS_NATS_URL'];
  const base = {
    cluster: 'existing' as const,
    kubeconfigPath: probe.files.join(delimiter),
    context: probe.context,
    apiserverUrl: probe.server,
    credentials: probe.credentials,
  };
  if (named !== undefined && named !== '')
    return {
      ...base,
      natsUrl: named,
      natsEnv: natsCredentialsOf(env),
      dir: '',
      startedNats: false,
      stop: () => Promise.resolve(),
    };
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-dev-'));
  const kept =
    options.keepNatsStore === undefined
      ? undefined
      : keptStore(probe, options.keepNatsStore.operator, env);
  try {
    const ca = await createCa(dir);
    const credentials = loopbackCredentials(dir);
    const config = await natsConfig(dir, {
      ...(await loopbackTls(ca)),
      auth: credentials,
      ...(kept?.held === undefined ? {} : { storeDir: kept.held.dir }),
    });
    const server = await startNats(config);
    return {
      ...base,
      natsUrl: natsUrl(config),
      natsEnv: { KUBEBUS_NATS_CA: ca.caCert, ...credentials.clientEnv },
      dir,
      startedNats: true,
      ...(kept === undefined ? {} : { natsStore: kept }),
      async stop() {
        await server.stop();
        kept?.held?.release();
        if (options.keepDir !== true) rmSync(dir, { recursive: true, force: true });
        // the logs stay for reading; the run's CA key, TLS key and NATS password go with it
        else
          for (const name of readdirSync(dir))
            if (name.endsWith('.key') || name === 'nats-password')
              rmSync(join(dir, name), { force: true });
      },
    };
  } catch (error) {
    kept?.held?.release();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The cluster's dev store of this operator, if no other live process holds it (or it cannot be made). */
function keptStore(
  probe: { server: string; context: string; clusterId?: string },
  operator: string,
  env: Env,
): KeptNatsStore {
  const cluster = probe.clusterId ?? `${probe.server}\n${probe.context}`;
  const dir = devStoreDir(env, cluster, operator);
  try {
    const held = holdStore(join(dir, 'jetstream'), {
      onLost: () => {
        process.stderr.write(
          `warning: another kubebus dev took this cluster's NATS store (${dir}) over while this run was paused: stop this run, or its nats-server and the other's share one store\n`,
        );
      },
    });
    return { dir, ...(held === undefined ? {} : { held }) };
  } catch (error) {
    // an unwritable cache: this run's store is its own, as before
    return { dir, unusable: firstLine(error) };
  }
}

/** The user's NATS credentials, passed on with the URL they came with. */
function natsCredentialsOf(env: Env): Record<string, string> {
  const names = [
    'KUBEBUS_NATS_USER',
    'KUBEBUS_NATS_PASSWORD',
    'KUBEBUS_NATS_PASSWORD_FILE',
    'KUBEBUS_NATS_CA',
    'KUBEBUS_NATS_CERT',
    'KUBEBUS_NATS_KEY',
  ];
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = env[name];
      return value === undefined || value === '' ? [] : [[name, value]];
    }),
  );
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
