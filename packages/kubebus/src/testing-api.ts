// kubebus/testing: what envtest is to controller-runtime. A real
// kube-apiserver, etcd and nats-server on loopback ports (found as
// docs/operators.md says, cached in ~/.cache/kubebus), or an existing cluster
// (`cluster: 'existing'` or KUBEBUS_USE_EXISTING_CLUSTER=1, like envtest's
// USE_EXISTING_CLUSTER); your CRDs installed, your operator run in-process.
import type {
  Condition,
  CustomResource,
  Operator,
  Resource,
  ResourceObject,
} from '@kubebus/shared/definition';
import type { PerturbationOptions, PerturbationReport } from './perturb/report.js';

export interface TestEnvironmentOptions {
  /**
   * 'local': kube-apiserver, etcd and nats-server started on loopback;
   * 'existing': the cluster of a kubeconfig (its CRDs and objects stay after
   * stop()). Default: 'existing' when KUBEBUS_USE_EXISTING_CLUSTER is 1 or
   * true, else 'local'.
   */
  readonly cluster?: 'local' | 'existing';
  /** existing cluster: a kubeconfig file or KUBECONFIG list (default KUBECONFIG, else ~/.kube/config) */
  readonly kubeconfig?: string;
  /** existing cluster: the kubeconfig context (default: its current context) */
  readonly context?: string;
  /** existing cluster: the NATS to use (default KUBEBUS_NATS_URL, else a nats-server started here) */
  readonly natsUrl?: string;
  /** local: also run kube-controller-manager (garbage collection, namespaces, volume protection; no workload controllers) */
  readonly controllerManager?: boolean;
  /** keep the servers' logs and data after stop() (their directory is `dir`) */
  readonly keepDir?: boolean;
}

/** The object a resource describes, as the apiserver returns it. */
export type ObjectOf<R extends Resource> = R extends Resource<infer Shape> ? Shape : never;

export interface WaitForOptions {
  /** default: "default" (ignored for cluster-scoped resources) */
  readonly namespace?: string;
  /** default: 60 000 */
  readonly timeoutMs?: number;
  /** how the timeout names what was awaited (default: the predicate's source) */
  readonly what?: string;
}

export interface RunOptions {
  /** KUBEBUS_* settings for the operator (e.g. KUBEBUS_BACKOFF_BASE) */
  readonly env?: Readonly<Record<string, string>>;
  /** default: warn */
  readonly logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** JSON lines (default) or lines for a person, on stdout */
  readonly log?: 'json' | 'readable';
  /** only these roles (default all three): a role run apart stops and starts on its own */
  readonly roles?: readonly ('watcher' | 'reconciler' | 'status-writer')[];
  /**
   * The operator's version, as KUBEBUS_OPERATOR_VERSION for `kubebus run`: a
   * version the bus has not seen reconciles every existing object again (the
   * upgrade sweep). Default: a hash of its reconcile and finalize functions.
   */
  readonly version?: string;
}

export interface RunningOperatorHandle {
  stop(): Promise<void>;
}

export interface TestEnvironment {
  /** where the apiserver is: the loopback servers, or an existing cluster */
  readonly cluster: 'local' | 'existing';
  /** a kubeconfig file for the admin user (existing: the KUBECONFIG list it was read from) */
  readonly kubeconfigPath: string;
  /** existing cluster: the context in use */
  readonly context: string | undefined;
  readonly apiserverUrl: string;
  readonly natsUrl: string;
  /**
   * What a kubebus client (a role, `kubebus history`) needs to reach NATS:
   * KUBEBUS_NATS_URL and, for the nats-server started here (TLS and one user,
   * made for this run), KUBEBUS_NATS_CA, KUBEBUS_NATS_USER and
   * KUBEBUS_NATS_PASSWORD_FILE; for a server you named, the variables you gave.
   */
  readonly natsEnv: Readonly<Record<string, string>>;
  /** where the servers started here keep their logs and data ('' when none were) */
  readonly dir: string;
  /** Installs the CRDs of these resources and waits until they are served. */
  install(...resources: readonly CustomResource[]): Promise<void>;
  /** Runs the operator in this process, all roles (or those given), until stop(). */
  run(operator: Operator, options?: RunOptions): Promise<RunningOperatorHandle>;
  /** Server-side apply as the admin (namespace defaults to "default"). */
  apply(object: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly metadata: {
      readonly name: string;
      readonly namespace?: string;
      readonly labels?: Readonly<Record<string, string>>;
      readonly annotations?: Readonly<Record<string, string>>;
      readonly [field: string]: unknown;
    };
    readonly [field: string]: unknown;
  }): Promise<ResourceObject>;
  /** The object as the apiserver has it now, or undefined. */
  get<R extends Resource>(
    resource: R,
    name: string,
    namespace?: string,
  ): Promise<ObjectOf<R> | undefined>;
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
  /**
   * Reads the object until `predicate` holds for it (undefined: the object
   * does not exist, so `(o) => o === undefined` waits for a delete) and
   * returns what satisfied it. A predicate that throws (an assert) has not
   * held yet. The timeout says what was awaited, the object last seen, and
   * the predicate's last error.
   */
  waitFor<R extends Resource>(
    resource: R,
    name: string,
    predicate: (object: ObjectOf<R> | undefined) => boolean,
    options?: WaitForOptions,
  ): Promise<ObjectOf<R> | undefined>;
  /**
   * Does what kubelets would, from now until `stop()`: reports every
   * Deployment's and StatefulSet's replicas ready at its generation (ready,
   * available, updated, observedGeneration; a Deployment Available), those
   * made or scaled later too. Resolves once every workload that exists now is
   * reported. `{ once: true }`: only those that exist now, nothing after (a
   * test that holds a workload not ready). Local servers only: on an existing
   * cluster its kubelets do it, and this does nothing.
   */
  markWorkloadsReady(options?: { readonly once?: boolean }): Promise<void>;
  /** Stops the operators and what was started here; an existing cluster keeps its CRDs and objects. */
  stop(): Promise<void>;
}

export type * from './perturb/report.js';

/**
 * Perturbation testing (`kubebus test` as a function): the operator on its own
 * test bed over a workload (its samples' specs, and the revisions of the
 * fixtures they refer to), unperturbed, then crashed after each write, with
 * changes it never sees, with older revisions on the bus, with its watcher
 * behind, with its status writer restarted, its partition handed over
 * mid-reconcile and the next change applied mid-reconcile; the report says
 * whether every run converged to the unperturbed one's state, and the first
 * that did not.
 */
export declare function perturbationTest(
  operator: Operator,
  options?: PerturbationOptions,
): Promise<PerturbationReport>;

export interface ConversionCheckOptions {
  /** generated objects per version and direction (default 200) */
  readonly numRuns?: number;
  /** fast-check's seed, to replay a failure */
  readonly seed?: number;
}

/**
 * The round-trip property of a resource in several versions, for every
 * version but the storage one, through the webhook's own code: objects
 * generated from the version's zod schemas convert to the storage version
 * (which its schema accepts) and back unchanged, and so do storage objects
 * through the version. The objects start with annotations (unrelated ones,
 * stale round-trip ones); they come back but for those the conversions set
 * or delete, and further round trips change nothing. And objects with any of
 * their fields taken out, as a server-side apply hands them over, convert
 * without throwing. Throws with the smallest counterexample.
 */
export declare function checkConversions(
  resource: CustomResource,
  options?: ConversionCheckOptions,
): void;

/** Starts the servers, or connects to the existing cluster (a few seconds once built). */
export declare function startTestEnvironment(
  options?: TestEnvironmentOptions,
): Promise<TestEnvironment>;
