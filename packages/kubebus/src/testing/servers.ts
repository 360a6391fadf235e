// Where a test environment's servers come from: the loopback test bed
// (kube-apiserver, etcd, nats-server started here, like envtest), or an
// existing cluster named by a kubeconfig with a nats-server started here
// unless one is named (envtest's USE_EXISTING_CLUSTER).
import type { HeldStore } from './dev-nats-store.js';
import { loadKubeConfig, type KubeCredentials } from '@kubebus/shared/kube';
import { TestBed } from '../../../../test/bed/testbed.js';

export interface Servers {
  readonly cluster: 'local' | 'existing';
  /** a kubeconfig file, or the KUBECONFIG list an existing cluster was read from */
  readonly kubeconfigPath: string;
  /** the kubeconfig context in use (existing clusters) */
  readonly context: string | undefined;
  readonly apiserverUrl: string;
  readonly natsUrl: string;
  /** NATS variables a client needs besides the URL (CA, user, password file) */
  readonly natsEnv: Readonly<Record<string, string>>;
  /** where the servers started here keep their logs and data ('' when none were) */
  readonly dir: string;
  /** whether a nats-server was started here (else KUBEBUS_NATS_URL named one) */
  readonly startedNats: boolean;
  readonly credentials: KubeCredentials;
  /** kubebus dev on an existing cluster: the JetStream store kept across runs, unless another run held it */
  readonly natsStore?: KeptNatsStore;
  /** the garbage collector learns the CRDs installed since it started (local: kube-controller-manager restarted) */
  refreshGarbageCollector?(): Promise<void>;
  /** stops what was started here; an existing cluster and what it holds stay */
  stop(): Promise<void>;
}

export interface KeptNatsStore {
  /** the cluster's store */
  readonly dir: string;
  /** set when this run holds it; unset: another run did (or `unusable` says why not), and this one's store is its own */
  readonly held?: HeldStore;
  /** why the store could not be made or locked (an unwritable cache) */
  readonly unusable?: string;
}

export async function startLocalServers(options: {
  readonly controllerManager?: boolean;
  readonly keepDir?: boolean;
}): Promise<Servers> {
  // NATS as every shipped shape runs it: TLS (a CA made for this run) and a user
  const bed = await TestBed.start({
    natsTls: true,
    natsAuth: true,
    ...(options.controllerManager === undefined
      ? {}
      : { controllerManager: options.controllerManager }),
    ...(options.keepDir === undefined ? {} : { keepDir: options.keepDir }),
  });
  try {
    return {
      cluster: 'local',
      kubeconfigPath: bed.kubeconfigPath,
      context: undefined,
      apiserverUrl: bed.apiserverUrl,
      natsUrl: bed.natsUrl,
      natsEnv: bed.natsClientEnv,
      dir: bed.dir,
      startedNats: true,
      credentials: await loadKubeConfig(bed.kubeconfigPath, {}),
      refreshGarbageCollector: () => bed.restartControllerManager(),
      stop: () => bed.stop(),
    };
  } catch (error) {
    await bed.stop();
    throw error;
  }
}
