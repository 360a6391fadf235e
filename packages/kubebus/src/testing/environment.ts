// The test environment: servers from the test bed or an existing cluster, a
// client as the kubeconfig's user, and operators run in-process with all roles.
import { KubeClient, isNotFound, objectPath } from '@kubebus/shared/kube';
import { Registry, restClientMetrics, startServiceShell } from '@kubebus/shared/obs';
import { crdOf } from '../api/crd.js';
import {
  apiVersionOf,
  type Condition,
  type CustomResource,
  type Resource,
  type ResourceObject,
} from '@kubebus/shared/definition';
import { operatorVersionOf } from '../host/operator-version.js';
import { roleConfigsOf, runOperator } from '../host/run-operator.js';
import { ROLES } from '../host/role-configs.js';
import { VERSION } from '../cli/version.js';
import { refOf } from '@kubebus/reconciler/service';
import type {
  ObjectOf,
  RunningOperatorHandle,
  RunOptions,
  TestEnvironment,
  TestEnvironmentOptions,
} from '../testing-api.js';
import type { Operator } from '@kubebus/shared/definition';
import type { IntentTaken } from '@kubebus/status-writer/service';
import { readableDestination } from '../cli/readable-log.js';
import {
  markWorkloadsReady,
  startWorkloadStandIn,
  type WorkloadStandIn,
} from './workload-stand-in.js';
import { localWebhook, type LocalWebhook } from './local-webhook.js';
import { connectExistingCluster } from './existing-cluster.js';
import { startLocalServers, type KeptNatsStore, type Servers } from './servers.js';
import { describePredicate, waitForObject, waitUntil } from './wait.js';

/** The roles' backoff cap on the bed (short, so retries come soon); kubebus test waits longer than it. */
export const TEST_BACKOFF_CAP = '2s';

type Env = Readonly<Record<string, string | undefined>>;

/** `cluster` as given, else KUBEBUS_USE_EXISTING_CLUSTER (envtest's USE_EXISTING_CLUSTER), else local. */
export function clusterOf(options: TestEnvironmentOptions, env: Env): 'local' | 'existing' {
  if (options.cluster !== undefined) return options.cluster;
  const flag = env['KUBEBUS_USE_EXISTING_CLUSTER']?.toLowerCase();
  return flag === '1' || flag === 'true' ? 'existing' : 'local';
}

/** What `kubebus test` asks of a run beyond the test kit's options (not public). */
export interface InProcessRunOptions extends RunOptions {
  /** another replica of the operator (default: test-<operator>) */
  readonly replicaId?: string;
  readonly statusIntentTaken?: IntentTaken;
  /** the operator's module file (kubebus dev): its version is the file's, as under `kubebus run` */
  readonly module?: string;
}

/** The test environment as `kubebus test` drives it. */
export interface InProcessEnvironment extends TestEnvironment {
  run(operator: Operator, options?: InProcessRunOptions): Promise<RunningOperatorHandle>;
  /** kubebus dev on an existing cluster: the NATS store kept across runs (dev-nats-store.ts) */
  readonly natsStore?: KeptNatsStore;
}

/** What `kubebus dev` asks of the environment beyond the test kit's options (not public). */
export interface InProcessEnvironmentOptions extends TestEnvironmentOptions {
  /** on an existing cluster, keep the started nats-server's store across runs (one per cluster and operator) */
  readonly keepNatsStore?: { readonly operator: string };
}

/** The servers the options name: the loopback test bed, or an existing cluster. */
function serversOf(options: InProcessEnvironmentOptions, env: Env): Promise<Servers> {
  const keepDir = options.keepDir === undefined ? {} : { keepDir: options.keepDir };
  if (clusterOf(options, env) === 'local')
    return startLocalServers({
      ...keepDir,
      ...(options.controllerManager === undefined
        ? {}
        : { controllerManager: options.controllerManager }),
    });
  return connectExistingCluster(
    {
      ...keepDir,
      ...(options.kubeconfig === undefined ? {} : { kubeconfig: options.kubeconfig }),
      ...(options.context === undefined ? {} : { context: options.context }),
      ...(options.natsUrl === undefined ? {} : { natsUrl: options.natsUrl }),
      ...(options.keepNatsStore === undefined ? {} : { keepNatsStore: options.keepNatsStore }),
    },
    env,
  );
}

/**
 * The test environment: its servers, a client as the kubeconfig's user, and
 * operators run in this process. `env` is read for the existing cluster
 * (KUBECONFIG, HOME, KUBEBUS_NATS_*, KUBEBUS_USE_EXISTING_CLUSTER).
 */
export async function startEnvironment(
  options: InProcessEnvironmentOptions = {},
  env: Env = {},
): Promise<InProcessEnvironment> {
  const servers = await serversOf(options, env);
  const { credentials } = servers;
  const client = new KubeClient(credentials, restClientMetrics(new Registry()));
  const running = new Set<{ stop(): Promise<void> }>();
  let standIn: WorkloadStandIn | undefined;
  // versioned resources on the loopback servers: the apiserver calls the in-process webhook,
  // one port per resource (each operator serves its own)
  const webhooks = new Map<string, Promise<LocalWebhook>>();
  const localConversion = (resource: CustomResource) => {
    if (servers.cluster !== 'local' || resource.versions.length < 2) return undefined;
    const name = `${resource.plural}.${resource.group}`;
    const made = webhooks.get(name) ?? localWebhook(servers.dir, name);
    webhooks.set(name, made);
    return made;
  };
  const pathOf = (resource: Resource, name: string, namespace = 'default') =>
    objectPath(refOf(resource), resource.scope === 'Namespaced' ? namespace : '', name);

  const environment: InProcessEnvironment = {
    cluster: servers.cluster,
    kubeconfigPath: servers.kubeconfigPath,
    context: servers.context,
    apiserverUrl: servers.apiserverUrl,
    natsUrl: servers.natsUrl,
    natsEnv: Object.freeze({ KUBEBUS_NATS_URL: servers.natsUrl, ...servers.natsEnv }),
    dir: servers.dir,
    ...(servers.natsStore === undefined ? {} : { natsStore: servers.natsStore }),

    async install(...resources) {
      for (const resource of resources) {
        const local = await localConversion(resource);
        const generated = crdOf(resource, local?.target);
        const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${generated.metadata.name}`;
        // on an existing cluster the CRD's conversion is the cluster's (the deployed webhook):
        // an installed one keeps its own, never forced over by one this process cannot serve
        const installed =
          local === undefined && resource.versions.length > 1
            ? await client.getIfExists<{ spec?: { conversion?: { strategy?: string } } }>(path)
            : undefined;
        // none to keep (no CRD, or one of a single version: strategy None): applied so, the
        // apiserver would serve each version without converting and prune what one lacks —
        // a spec written back through the other version loses its fields for good
        if (
          local === undefined &&
          resource.versions.length > 1 &&
          installed?.spec?.conversion?.strategy !== 'Webhook'
        )
          throw new Error(
            `${resource.kind} has versions ${resource.versions.map((v) => v.name).join(', ')}, and the cluster's CRD ${generated.metadata.name} has no conversion webhook to convert between them (this process cannot serve one the cluster's apiserver reaches): deploy the operator first (kubebus generate; its conversion Service), or use --cluster local`,
          );
        const crd =
          installed?.spec?.conversion === undefined
            ? generated
            : {
                ...generated,
                // nor the generated cert-manager annotation, which would inject another CA
                metadata: { name: generated.metadata.name },
                spec: { ...generated.spec, conversion: installed.spec.conversion },
              };
        await client.request(path, {
          method: 'PATCH',
          contentType: 'application/apply-patch+yaml',
          query: { fieldManager: 'kubebus-testing', force: true },
          body: crd,
        });
        await waitUntil(
          async () => {
            const served = await client.request<{ resources?: { name: string }[] }>(
              `/apis/${resource.group}/${resource.version}`,
            );
            return served.resources?.some((r) => r.name === resource.plural) === true
              ? true
              : undefined;
          },
          () => `the CRD ${crd.metadata.name} to be served`,
          60_000,
        );
      }
      // owner references to the new kinds are garbage-collected from now on, not in ~30–46 s
      if (resources.length > 0) await servers.refreshGarbageCollector?.();
    },

    async run(operator, runOptions: InProcessRunOptions = {}) {
      const roles = runOptions.roles ?? ROLES;
      const shell = await startServiceShell({
        service: operator.name,
        logLevel: runOptions.logLevel ?? 'warn',
        health: { host: '127.0.0.1', port: 0 },
        ...(runOptions.log === 'readable'
          ? { destination: readableDestination(process.stdout) }
          : {}),
      });
      const replicaId = runOptions.replicaId ?? `test-${operator.name}`;
      const local = roles.includes('reconciler') ? await localConversion(operator.for) : undefined;
      const handle = await runOperator({
        ...(local === undefined ? {} : { webhook: local.config }),
        operator,
        roles,
        configs: roleConfigsOf(
          operator,
          roles,
          {
            ...environment.natsEnv,
            KUBEBUS_HEALTH_PORT: '0',
            KUBEBUS_BACKOFF_BASE: '100ms',
            KUBEBUS_BACKOFF_CAP: TEST_BACKOFF_CAP,
            KUBEBUS_CURSOR_FLUSH: '200ms',
            ...runOptions.env,
          },
          replicaId,
        ),
        replicaId,
        kubeConfig: credentials,
        shell,
        version: VERSION,
        // a new version reconciles what exists again, as under `kubebus run`
        operatorVersion: operatorVersionOf(
          runOptions.module,
          operator,
          runOptions.version ?? runOptions.env?.['KUBEBUS_OPERATOR_VERSION'],
        ),
        ...(runOptions.statusIntentTaken === undefined
          ? {}
          : { statusIntentTaken: runOptions.statusIntentTaken }),
      }).catch(async (error: unknown) => {
        // what runOperator started it stopped; the shell is this call's to close
        await shell.health.close();
        throw error;
      });
      shell.started();
      const stoppable = {
        async stop() {
          if (!running.delete(stoppable)) return;
          await handle.stop();
          await shell.health.close();
        },
      };
      running.add(stoppable);
      return stoppable;
    },

    async apply(object) {
      const namespace = object.metadata.namespace ?? 'default';
      const [group, version] = object.apiVersion.includes('/')
        ? (object.apiVersion.split('/', 2) as [string, string])
        : ['', object.apiVersion];
      const discovery = await client.request<{
        resources?: { name: string; kind: string; namespaced: boolean }[];
      }>(group === '' ? `/api/${version}` : `/apis/${group}/${version}`);
      const found = discovery.resources?.find(
        (r) => r.kind === object.kind && !r.name.includes('/'),
      );
      if (found === undefined)
        throw new Error(`the apiserver does not serve ${object.kind} (${object.apiVersion})`);
      const ref = { group, version, resource: found.name, namespaced: found.namespaced };
      const body = {
        ...object,
        metadata: { ...object.metadata, ...(found.namespaced ? { namespace } : {}) },
      };
      return client.request<ResourceObject>(
        objectPath(ref, found.namespaced ? namespace : '', object.metadata.name),
        {
          method: 'PATCH',
          contentType: 'application/apply-patch+yaml',
          query: { fieldManager: 'kubebus-testing', force: true },
          body,
        },
      );
    },

    async get(resource, name, namespace) {
      return client.getIfExists(pathOf(resource, name, namespace));
    },

    async delete(resource, name, namespace) {
      try {
        await client.request(pathOf(resource, name, namespace), { method: 'DELETE' });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },

    async waitForCondition(resource, name, wanted, waitOptions = {}) {
      let last: readonly Condition[] | undefined;
      return waitUntil(
        async () => {
          const object = await client.getIfExists<ResourceObject>(
            pathOf(resource, name, waitOptions.namespace),
          );
          last = (object?.['status'] as { conditions?: Condition[] } | undefined)?.conditions;
          return last?.find(
            (c) =>
              c.type === wanted.type &&
              c.status === (wanted.status ?? 'True') &&
              (wanted.reason === undefined || c.reason === wanted.reason),
          );
        },
        () =>
          `${resource.kind} ${name} to show ${wanted.type}=${wanted.status ?? 'True'}${wanted.reason === undefined ? '' : ` (${wanted.reason})`}; its conditions: ${JSON.stringify(last ?? [])} (${apiVersionOf(resource)})`,
        waitOptions.timeoutMs ?? 60_000,
      );
    },

    async waitFor(resource, name, predicate, waitOptions = {}) {
      const namespace = resource.scope === 'Namespaced' ? (waitOptions.namespace ?? 'default') : '';
      return waitForObject(
        () => client.getIfExists<ObjectOf<typeof resource>>(pathOf(resource, name, namespace)),
        predicate,
        {
          target: `${resource.kind} ${namespace === '' ? name : `${namespace}/${name}`} (${apiVersionOf(resource)})`,
          predicate: describePredicate(predicate, waitOptions.what),
        },
        waitOptions.timeoutMs ?? 60_000,
      );
    },

    // on an existing cluster, kubelets report readiness: a stand-in would fight them
    markWorkloadsReady(options = {}) {
      if (servers.cluster !== 'local') return Promise.resolve();
      if (options.once === true) return markWorkloadsReady(client);
      standIn ??= startWorkloadStandIn(client);
      return standIn.pass();
    },

    async stop() {
      await standIn?.stop();
      for (const operator of [...running]) await operator.stop();
      client.close();
      await servers.stop();
    },
  };
  return environment;
}
