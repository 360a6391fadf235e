// The whole pipeline for end-to-end tests: the DatabaseCluster CRD, a watcher,
// reconciler replicas and a status writer, each a real process. In the
// one-process layout each of them is a `kubebus run` replica of every role.
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { httpCall } from '../bed/http.js';
import type { TestBed } from '../bed/testbed.js';
import databaseCluster from '../../examples/databasecluster/operator.js';
import { DEFAULT_STATUS_PARTITIONS } from '@kubebus/shared/config';
import { partitionsOf } from '../../packages/kubebus/src/host/role-configs.js';
import { ServiceProcess, type ServiceName } from './services.js';
import { waitFor } from './wait.js';

/** The example's work partitions: its definition decides them, as it does for users' operators. */
export const PARTITIONS = String(partitionsOf(databaseCluster));
/**
 * The status partitions the reconcilers and status writers are told (they must
 * agree): the default, the count the generated NATS users grant.
 */
export const STATUS_PARTITIONS = String(DEFAULT_STATUS_PARTITIONS);
export const DB_GROUP = 'example.kubebus.dev';

const crdFile = fileURLToPath(
  new URL('../../deploy/crds/databaseclusters.example.kubebus.dev.yaml', import.meta.url),
);

export function databaseClusterCrd(): V1CustomResourceDefinition {
  return parse(readFileSync(crdFile, 'utf8')) as V1CustomResourceDefinition;
}

export async function installDatabaseClusterCrd(bed: TestBed): Promise<void> {
  // Raw JSON: client-node's typed serializer drops `default` and `x-kubernetes-*`
  // keys of a CRD read from YAML.
  const created = await httpCall(
    `${bed.apiserverUrl}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
    {
      method: 'POST',
      body: JSON.stringify(databaseClusterCrd()),
      tls: bed.adminTls,
    },
  );
  if (created.status !== 201)
    throw new Error(`the CRD was refused (${created.status}): ${created.body}`);
  const api = bed.kubeConfig().makeApiClient(ApiextensionsV1Api);
  await waitFor(async () => {
    const crd = await api.readCustomResourceDefinition({ name: `databaseclusters.${DB_GROUP}` });
    return (crd.status?.conditions ?? []).some(
      (c) => c.type === 'Established' && c.status === 'True',
    );
  }, 'the DatabaseCluster CRD to be Established');
}

/** Three kinds of process (one per role), or replicas of every role in one process. */
export type Layout = 'three' | 'one';

/** Each role's settings (the `npm start` ones); a replica of every role takes all three. */
const ROLE_ENV = {
  watcher: { KUBEBUS_CURSOR_FLUSH: '200ms' },
  reconciler: {
    KUBEBUS_STATUS_PARTITIONS: STATUS_PARTITIONS,
    KUBEBUS_ACK_WAIT: '5s',
    KUBEBUS_LEASE_RENEW: '1s',
    KUBEBUS_BACKOFF_BASE: '100ms',
    KUBEBUS_BACKOFF_CAP: '1s',
  },
  'status-writer': {
    KUBEBUS_STATUS_PARTITIONS: STATUS_PARTITIONS,
    KUBEBUS_ACK_WAIT: '5s',
    KUBEBUS_LEASE_RENEW: '1s',
    KUBEBUS_QPS: '200',
    KUBEBUS_BURST: '400',
  },
} as const;

export class Pipeline {
  readonly services: ServiceProcess[] = [];
  #replica = 0;

  constructor(
    private readonly bed: TestBed,
    private readonly layout: Layout = 'three',
  ) {}

  watcher(
    env: Record<string, string> = {},
    options: { waitReady?: boolean } = {},
  ): Promise<ServiceProcess> {
    return this.#start('watcher', ROLE_ENV.watcher, undefined, env, options);
  }

  reconciler(
    env: Record<string, string> = {},
    options: { waitReady?: boolean } = {},
  ): Promise<ServiceProcess> {
    return this.#start(
      'reconciler',
      ROLE_ENV.reconciler,
      () => `reconciler-${++this.#replica}`,
      env,
      options,
    );
  }

  statusWriter(env: Record<string, string> = {}): Promise<ServiceProcess> {
    return this.#start(
      'status-writer',
      ROLE_ENV['status-writer'],
      () => `status-writer-${++this.#replica}`,
      env,
    );
  }

  forget(service: ServiceProcess): void {
    this.services.splice(this.services.indexOf(service), 1);
  }

  async stop(): Promise<void> {
    for (const service of this.services.splice(0)) await service.stop();
  }

  /** The role in a process of its own, or, in the one-process layout, a replica of every role. */
  async #start(
    role: ServiceName,
    settings: Readonly<Record<string, string>>,
    replicaId: (() => string) | undefined,
    env: Record<string, string>,
    options: { waitReady?: boolean } = {},
  ): Promise<ServiceProcess> {
    if (this.layout === 'one') {
      const everyRole = {
        ...ROLE_ENV.watcher,
        ...ROLE_ENV.reconciler,
        ...ROLE_ENV['status-writer'],
        KUBEBUS_REPLICA_ID: `replica-${++this.#replica}`,
      };
      return this.#track(
        await ServiceProcess.start(this.bed, 'all', { ...everyRole, ...env }, options),
      );
    }
    const id = replicaId === undefined ? {} : { KUBEBUS_REPLICA_ID: replicaId() };
    return this.#track(
      await ServiceProcess.start(this.bed, role, { ...settings, ...id, ...env }, options),
    );
  }

  #track(service: ServiceProcess): ServiceProcess {
    this.services.push(service);
    return service;
  }
}
