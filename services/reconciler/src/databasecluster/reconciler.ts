// The DatabaseCluster reconciler: level-based, idempotent, never branching on
// what kind of change happened. It reads the current object, validates the
// spec, keeps its finalizer, its backup bucket and its owned objects in place,
// and publishes the status it observes.
import { leaveParked, type ObjectReader, type StatusPublisher } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import {
  createIfAbsent,
  type AppliedObjects,
  hasFinalizer,
  recordEvent,
  setFinalizer,
  type EventInput,
  type KubeClient,
  type ResourceRef,
} from '@kubebus/shared/kube';
import {
  TerminalError,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@kubebus/shared/runtime';

import type { BackupBuckets } from './backup-bucket.js';
import {
  Resources,
  desiredConfigMap,
  desiredService,
  desiredStatefulSet,
  endpoint,
  names,
  newCredentials,
} from './owned.js';
import { DatabaseClusterSpecSchema, GROUP, PLURAL, VERSION, describeIssues } from './spec.js';
import { alreadyInvalid, invalidSpecStatus, runningStatus, type ObservedStatus } from './status.js';

export const FINALIZER = 'example.kubebus.dev/backup-bucket';
export const DATABASE_CLUSTERS: ResourceRef = {
  group: GROUP,
  version: VERSION,
  resource: PLURAL,
  namespaced: true,
};

export interface DatabaseClusterDeps {
  readonly reader: Pick<ObjectReader, 'read' | 'readAll'>;
  readonly client: KubeClient;
  readonly buckets: Pick<BackupBuckets, 'ensure' | 'remove'>;
  readonly status: Pick<StatusPublisher, 'publish'>;
  readonly fieldManager: string;
  readonly instance: string;
  /** skips applies that would change nothing (per process) */
  readonly applied: AppliedObjects;
  /** told when a change to a dead-lettered object is left alone */
  readonly onParked?: () => void;
}

export class DatabaseClusterReconciler implements Reconciler {
  constructor(private readonly deps: DatabaseClusterDeps) {}

  async reconcile(request: ReconcileRequest, context: ReconcileContext): Promise<ReconcileResult> {
    const { key } = request;
    const cluster = await this.deps.reader.read(key);
    if (cluster === undefined) return undefined; // gone: owned objects are garbage-collected
    if (cluster.metadata.deletionTimestamp !== undefined) return this.#finalize(cluster, context);
    if (leaveParked(request, cluster)) {
      // dead-lettered at this generation: a spec change or a re-drive runs it again
      this.deps.onParked?.();
      context.log.debug('parked at this generation: waiting for a spec change or a re-drive');
      return undefined;
    }

    const parsed = DatabaseClusterSpecSchema.safeParse(cluster['spec']);
    if (!parsed.success) {
      const message = describeIssues(parsed.error);
      await this.#publishStatus(cluster, invalidSpecStatus(cluster, message), context);
      if (!alreadyInvalid(cluster))
        await this.#event(cluster, 'Warning', 'InvalidSpec', message, 'Validate');
      throw new TerminalError(`invalid spec: ${message}`);
    }
    const spec = parsed.data;
    const { client, fieldManager } = this.deps;

    // The finalizer goes on before the external resource exists, so it is never leaked.
    if (!hasFinalizer(cluster, FINALIZER)) {
      await setFinalizer(client, DATABASE_CLUSTERS, cluster, FINALIZER, true, fieldManager);
    }
    if ((await this.deps.buckets.ensure(cluster.metadata.uid)) === 'created') {
      context.log.info('backup bucket created');
      await this.#event(
        cluster,
        'Normal',
        'BucketCreated',
        'Created the backup bucket',
        'Provision',
      );
    }
    // What it owns, as last recorded, in one request: the Secret (created once:
    // the bus records it without its data, so only the first reconcile POSTs),
    // and the objects whose apply is skipped when nothing would change.
    const owned = names(cluster);
    const at = (group: string, resource: string, name: string) => ({
      group,
      resource,
      namespace: key.namespace,
      name,
    });
    const [recordedSecret, service, configMap, statefulSet] = await this.deps.reader.readAll([
      at('', 'secrets', owned.secret),
      at('', 'services', owned.service),
      at('', 'configmaps', owned.configMap),
      at('apps', 'statefulsets', owned.statefulSet),
    ]);
    if (recordedSecret === undefined) {
      const credentials = await createIfAbsent(
        client,
        Resources.secrets,
        newCredentials(cluster, spec),
        fieldManager,
      );
      if (credentials === 'created') {
        await this.#event(
          cluster,
          'Normal',
          'CredentialsCreated',
          `Created Secret ${owned.secret}`,
          'Provision',
        );
      }
    }
    const options = { fieldManager, signal: context.signal };
    const applied = this.deps.applied;
    await Promise.all([
      applied.apply(client, Resources.services, desiredService(cluster, spec), options, service),
      applied.apply(
        client,
        Resources.configMaps,
        desiredConfigMap(cluster, spec),
        options,
        configMap,
      ),
      applied.apply(
        client,
        Resources.statefulSets,
        desiredStatefulSet(cluster, spec),
        options,
        statefulSet,
      ),
    ]);

    const observed = (statefulSet?.['status'] as { readyReplicas?: unknown } | undefined)
      ?.readyReplicas;
    const readyReplicas = typeof observed === 'number' ? observed : 0;
    await this.#publishStatus(
      cluster,
      runningStatus(
        cluster,
        spec.replicas,
        Math.min(readyReplicas, spec.replicas),
        endpoint(cluster, spec),
      ),
      context,
    );
    return undefined;
  }

  async #finalize(cluster: KubeObject, context: ReconcileContext): Promise<ReconcileResult> {
    if (!hasFinalizer(cluster, FINALIZER)) return undefined;
    // A failure here throws: retried with backoff, and the object is not released.
    if ((await this.deps.buckets.remove(cluster.metadata.uid)) === 'removed') {
      context.log.info('backup bucket removed');
      await this.#event(
        cluster,
        'Normal',
        'BucketRemoved',
        'Removed the backup bucket',
        'Finalize',
      );
    }
    await setFinalizer(
      this.deps.client,
      DATABASE_CLUSTERS,
      cluster,
      FINALIZER,
      false,
      this.deps.fieldManager,
    );
    return undefined;
  }

  async #publishStatus(
    cluster: KubeObject,
    status: ObservedStatus,
    context: ReconcileContext,
  ): Promise<void> {
    await this.deps.status.publish({
      key: {
        group: GROUP,
        resource: PLURAL,
        namespace: cluster.metadata.namespace ?? '',
        name: cluster.metadata.name,
      },
      apiVersion: cluster.apiVersion,
      kind: cluster.kind,
      uid: cluster.metadata.uid,
      observedGeneration: cluster.metadata.generation ?? 0,
      status: status as Record<string, unknown>,
      traceparent: context.traceparent,
      reconcileId: context.reconcileId,
    });
  }

  async #event(
    cluster: KubeObject,
    type: EventInput['type'],
    reason: string,
    note: string,
    action: string,
  ) {
    await recordEvent(this.deps.client, cluster, {
      type,
      reason,
      note,
      action,
      reportingController: 'kubebus.dev/databasecluster',
      reportingInstance: this.deps.instance,
    });
  }
}
