// The status writer service, assembled: a runtime Controller applying one
// operator's status intents, over the partitions of its status
// (kubebus.status.<controller>.…) this replica holds.
import {
  agree,
  agreementKeys,
  durableNames,
  leaseGroups,
  openLeaseBucket,
  repartitioningBy,
  OutcomeRecorder,
  pendingPerPartition,
  defaultTopology,
  Buckets,
  ObjectReader,
  Streams,
  deadLetter,
  openJetStream,
  origins,
  partitionOf,
  parkMalformed,
  publishDeadLetter,
  runPartitioned,
  serverAtLeast,
  subjects,
  watchConsumerLag,
  type BusConnection,
  type InProcessStatusWriter,
} from '@kubebus/shared/bus';
import { ErrorCodes } from '@kubebus/shared/errors';
import type { KubeObject } from '@kubebus/shared/events';
import { type KubeClient, requireKubernetesVersion } from '@kubebus/shared/kube';
import { type Logger, type Registry, type Spans } from '@kubebus/shared/obs';
import { Controller, runtimeMetrics, type WorkItem } from '@kubebus/shared/runtime';
import { Kvm } from '@nats-io/kv';
import type { StatusWriterConfig } from './config.js';
import { inProcessWriter } from './in-process-writer.js';
import { statusWriterMetrics } from './metrics.js';
import { StatusApplier, parseIntent, type IntentTaken } from './status-applier.js';

/**
 * The name of its work loop (metrics' `controller` label). Its dead letters
 * and outcomes carry the operator's name too (origins.statusWriter, ADR 0015):
 * kubebus.dlq.<operator>_status-writer.…, kubebus.outcomes.<operator>_status-writer.…
 */
export const CONTROLLER_NAME = 'status-writer';

export interface RunningStatusWriter {
  /** for a reconciler in the same process: its intents written at once (ADR 0028) */
  readonly inProcess: InProcessStatusWriter;
  stop(): Promise<void>;
}

export async function startStatusWriter(deps: {
  readonly config: StatusWriterConfig;
  /** the process's apiserver client: shared by the roles of one process (one connection, one throttle) */
  readonly kube: KubeClient;
  readonly bus: BusConnection;
  readonly log: Logger;
  readonly registry: Registry;
  /** a span per reconcile; traceparents only without it */
  readonly spans?: Spans;
  /** told of each intent before it is judged (a test's hold point: status-applier.ts) */
  readonly taken?: IntentTaken;
}): Promise<RunningStatusWriter> {
  const { config, bus, log, registry } = deps;
  const { js, jsm } = await openJetStream(
    bus.nc,
    { ...defaultTopology, replicas: config.streamReplicas },
    log,
  );
  const leases = await openLeaseBucket(bus.nc, jsm, Buckets.leases);
  await agree(
    await new Kvm(bus.nc).open(Buckets.agreements),
    agreementKeys.status(config.controller),
    { partitions: config.partitions, registeredBy: `status writer ${config.replicaId}` },
    log,
    repartitioningBy(leases, config.controller, config.replicaId, defaultTopology.leaseTtlMs),
  );
  const client = deps.kube;
  await requireKubernetesVersion(client, log);
  const metrics = statusWriterMetrics(registry);
  // direct gets on the connection's own inbox, as the reconciler's: a quarter of nats.js' CPU
  const reader = new ObjectReader(
    jsm,
    (path) => client.getIfExists<KubeObject>(path),
    serverAtLeast(bus.nc, '2.11.0') ? bus.nc : undefined,
  );
  const origin = origins.statusWriter(config.controller);

  // Parks an intent with the reason and the subject `kubebus dlq redrive` sends it back to.
  const park = async (item: WorkItem, error: unknown, attempts: number) => {
    await publishDeadLetter(
      js,
      deadLetter({
        origin,
        key: item.key,
        reason: error instanceof Error ? error.message : String(error),
        code: ErrorCodes.KubeApi,
        subject: subjects.status(
          config.controller,
          partitionOf(item.key, config.partitions),
          item.key,
        ),
        attempts,
        ...(item.traceparent ? { traceparent: item.traceparent } : {}),
        ...(item.body ? { payload: Buffer.from(item.body).toString('base64') } : {}),
      }),
    );
  };
  const outcomes = new OutcomeRecorder(bus.nc, origin);
  const applier = new StatusApplier({
    client,
    read: (key) => reader.read(key),
    fieldManager: config.fieldManager,
    metrics,
    ...(config.primary === undefined ? {} : { primary: config.primary }),
    ...(deps.taken === undefined ? {} : { taken: deps.taken }),
  });
  const controller = new Controller(applier, {
    name: CONTROLLER_NAME,
    onOutcome: (outcome) => {
      outcomes.record(outcome);
    },
    maxConcurrent: config.maxConcurrent,
    retry: config.retry,
    ...(deps.spans === undefined ? {} : { spans: deps.spans }),
    heartbeatMs: Math.max(1_000, config.ackWaitMs / 3),
    metrics: runtimeMetrics(registry),
    log,
    onDeadLetter: park,
    // A patch the apiserver rejects (422) is parked with its message, never retried in a loop.
    onTerminal: async (item, error) => {
      metrics.patches.inc({ result: 'dead_letter' });
      await park(item, error, 1);
    },
  });

  const partitions = await runPartitioned(
    { js, jsm, leases, controller, log },
    {
      stream: Streams.status,
      durable: (partition) => durableNames.status(config.controller, partition),
      leaseGroup: leaseGroups.status(config.controller),
      filterOf: (partition) => subjects.statusOfPartition(config.controller, partition),
      ackWaitMs: config.ackWaitMs,
      maxAckPending: pendingPerPartition(config.maxConcurrent, config.partitions),
      replicaId: config.replicaId,
      partitions: config.partitions,
      renewEveryMs: config.leaseRenewMs,
      parse: (message) => {
        try {
          const intent = parseIntent(message.data);
          return {
            ok: true,
            key: intent.key,
            ...(intent.traceparent ? { traceparent: intent.traceparent } : {}),
          };
        } catch (error) {
          return { ok: false, reason: (error as Error).message };
        }
      },
      onMalformed: (message, reason) => parkMalformed(js, origin, message, reason),
    },
  );
  const lag = watchConsumerLag({
    jsm,
    registry,
    stream: Streams.status,
    consumers: () => partitions.held().map((p) => durableNames.status(config.controller, p)),
    everyMs: 5_000,
  });
  log.info({ partitions: partitions.held() }, 'status writer started');

  return {
    inProcess: inProcessWriter({
      applier,
      outcomes,
      handoffs: metrics.handoffs,
      log,
      maxConcurrent: config.maxConcurrent,
    }),
    async stop() {
      lag.stop();
      await partitions.stop();
      await controller.stop();
      log.info('status writer stopped');
    },
  };
}
