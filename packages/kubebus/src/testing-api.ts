// kubebus/testing: what envtest is to controller-runtime. A real
// kube-apiserver, etcd and nats-server on loopback ports (built once from
// their Go modules, cached in ~/.cache/kubebus; Go >= 1.26 on PATH for the
// first build), your CRDs installed, your operator run in-process.
import type {
  Condition,
  CustomResource,
  Operator,
  Resource,
  ResourceObject,
} from '@kubebus/shared/definition';

export interface TestEnvironmentOptions {
  /** also run kube-controller-manager (garbage collection, Deployments → ReplicaSets) */
  readonly controllerManager?: boolean;
  /** keep the servers' logs and data after stop() (their directory is `dir`) */
  readonly keepDir?: boolean;
}

export interface RunOptions {
  /** KUBEBUS_* settings for the operator (e.g. KUBEBUS_BACKOFF_BASE) */
  readonly env?: Readonly<Record<string, string>>;
  /** default: warn */
  readonly logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** JSON lines (default) or lines for a person, on stdout */
  readonly log?: 'json' | 'readable';
}

export interface RunningOperatorHandle {
  stop(): Promise<void>;
}

export interface TestEnvironment {
  /** a kubeconfig file for the admin user */
  readonly kubeconfigPath: string;
  readonly apiserverUrl: string;
  readonly natsUrl: string;
  /** where the servers keep their logs and data */
  readonly dir: string;
  /** Installs the CRDs of these resources and waits until they are served. */
  install(...resources: readonly CustomResource[]): Promise<void>;
  /** Runs the operator in this process, all roles, until stop(). */
  run(operator: Operator, options?: RunOptions): Promise<RunningOperatorHandle>;
  /** Server-side apply as the admin (namespace defaults to "default"). */
  apply(object: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly metadata: { readonly name: string; readonly namespace?: string };
    readonly [field: string]: unknown;
  }): Promise<ResourceObject>;
  /** The object as the apiserver has it now, or undefined. */
  get<R extends Resource>(
    resource: R,
    name: string,
    namespace?: string,
  ): Promise<(R extends Resource<infer Shape> ? Shape : never) | undefined>;
  delete(resource: Resource, name: string, namespace?: string): Promise<void>;
  /**
   * Waits until the object shows the condition (status "True" unless given),
   * and returns the condition; fails with the last seen conditions.
   */
  waitForCondition(
    resource: Resource,
    name: string,
    condition: { readonly type: string; readonly status?: string; readonly reason?: string },
    options?: { readonly namespace?: string; readonly timeoutMs?: number },
  ): Promise<Condition>;
  /** Does what kubelets would: reports every Deployment's and StatefulSet's replicas ready. */
  markWorkloadsReady(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the servers (a few seconds once built). */
export declare function startTestEnvironment(
  options?: TestEnvironmentOptions,
): Promise<TestEnvironment>;
