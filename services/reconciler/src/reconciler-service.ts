// The reconciler service, assembled: a reconciler (DatabaseCluster's, or any
// operator's from the kubebus host) in a runtime Controller, fed by the
// partitions of KUBEBUS_WORK this replica holds and, optionally, by the
// CloudEvents HTTP source.
import {
  AnsweredDeliveries,
  agree,
  applyConsumers,
  agreementKeys,
  durableNames,
  leaseGroups,
  openLeaseBucket,
  repartitioningBy,
  OutcomeRecorder,
  serverAtLeast,
  pendingPerPartition,
  defaultTopology,
  Buckets,
  HandedDownWrites,
  LaterRequeues,
  PerformedCalls,
  openOperatorBucket,
  performedBucketConfig,
  laterConsumer,
  outcomeRecordsSince,
  ObjectReader,
  OwnWrites,
  StatusPublisher,
  type InProcessStatusWriter,
  Streams,
  parseWorkMark,
  deadLetter,
  openJetStream,
  partitionOf,
  parkMalformed,
  publishDeadLetter,
  CRASHED_PROCESS,
  DEAD_LETTERED,
  publishDegraded,
  UpgradeSweeper,
  runPartitioned,
  subjects,
  watchConsumerLag,
  type BusConnection,
  type StaleReadOutcome,
  type RunningPartitions,
} from '@kubebus/shared/bus';
import { ErrorCodes, isKubebusError, publicText } from '@kubebus/shared/errors';
import type { KubeObject } from '@kubebus/shared/events';
import {
  AppliedObjects,
  MAX_NOTE_BYTES,
  truncateUtf8,
  type EventRecorder,
  type KubeClient,
  listPages,
  type ObjectKey,
  requireKubernetesVersion,
} from '@kubebus/shared/kube';
import { perRegistry, type Logger, type Registry, type Spans } from '@kubebus/shared/obs';
import {
  Controller,
  runtimeMetrics,
  type Reconciler,
  type WorkItem,
} from '@kubebus/shared/runtime';
import { Kvm } from '@nats-io/kv';
import { Counter } from 'prom-client';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { ReconcilerConfig } from './config.js';
import { ApiserverFallbackReader } from './apiserver-fallback-reader.js';
import { backgroundEvents } from './event-recording.js';
import { startHttpSource } from './http-source.js';
import { sinkAuthenticator } from './sink-auth.js';
import type { KnownResource } from './knative-event.js';

const parkedSkipsMetric = perRegistry(
  (registry: Registry) =>
    new Counter({
      name: 'kubebus_reconcile_parked_skips_total',
      help: 'Changes to a dead-lettered object that left its spec alone: not retried until a spec change or a re-drive',
      registers: [registry],
    }),
);

/**
 * How long stopping waits for Events still being sent: a few of their
 * requests, well inside a pod's termination grace (60 s) and beside the
 * rest of the drain, which does not wait for it.
 */
const EVENTS_STOP_MS = 5_000;

/**
 * The own writes a partition's previous owner made in this window are read
 * when the partition is taken (handed-down-writes.ts): one written longer ago
 * had that long to reach the bus. At most about so many outcome records.
 */
const HANDED_DOWN_WINDOW_MS = 60_000;
const HANDED_DOWN_MAX_RECORDS = 20_000;
/** a read of them stops after this long: well within half a lease's TTL, which waits for it */
const HANDED_DOWN_DEADLINE_MS = 3_000;

export interface RunningReconciler {
  readonly httpPort: number | undefined;
  stop(): Promise<void>;
}

/** What a reconciler is built with: the shared clients of this process. */
export interface ReconcilerTools {
  readonly reader: Pick<ObjectReader, 'read' | 'readAll'>;
  readonly client: KubeClient;
  readonly status: StatusPublisher;
  readonly bus: BusConnection;
  readonly fieldManager: string;
  /** this replica's id (Events' reportingInstance) */
  readonly instance: string;
  readonly applied: AppliedObjects;
  /** what this process wrote, so its reads never answer older (read-your-own-writes) */
  readonly ownWrites?: OwnWrites;
  /** count a change to a dead-lettered object that is left alone */
  readonly onParked: () => void;
  /** count a read of the primary older than this process' own status intent for it */
  readonly onStaleRead?: (outcome: StaleReadOutcome) => void;
  /** Events sent in the background (ADR 0029) */
  readonly events: EventRecorder;
  /** ctx.once's records of the calls made (performed-calls.ts) */
  readonly performed: PerformedCalls;
  /** how often an apply refused another owner's name is looked at again (KUBEBUS_CLAIM_RETRY) */
  readonly claimRetryMs: number;
}

export interface ReconcilerPlan {
  /** the resource it reconciles (the HTTP source maps events of it to keys) */
  readonly primary: KnownResource;
  /** every resource it reads: primary, owned, watched */
  readonly resources: readonly KnownResource[];
  build(tools: ReconcilerTools): Reconciler;
}

export async function startReconcilerService(deps: {
  readonly config: ReconcilerConfig;
  /** the process's apiserver client: shared by the roles of one process (one connection, one throttle) */
  readonly kube: KubeClient;
  readonly bus: BusConnection;
  readonly log: Logger;
  readonly registry: Registry;
  /** a span per reconcile; traceparents only without it */
  readonly spans?: Spans;
  readonly plan: ReconcilerPlan;
  /**
   * This process's version of the operator: a partition last swept by another
   * version has every object reconciled again when this replica takes it.
   */
  readonly operatorVersion?: string;
  /** the status writer of this process, when it runs one: intents are written there first (ADR 0028) */
  readonly statusWriter?: InProcessStatusWriter;
}): Promise<RunningReconciler> {
  const { config, bus, log, registry } = deps;
  // the streams and buckets as this process declares them, its operator's among them
  const topology = { ...defaultTopology, replicas: config.streamReplicas };
  const { js, jsm } = await openJetStream(bus.nc, topology, log);
  // the watcher publishes to the work partitions, the status writers consume the status ones
  const agreements = await new Kvm(bus.nc).open(Buckets.agreements);
  const registeredBy = `reconciler ${config.replicaId}`;
  const leases = await openLeaseBucket(bus.nc, jsm, Buckets.leases);
  const repartitioning = repartitioningBy(
    leases,
    config.controller,
    config.replicaId,
    defaultTopology.leaseTtlMs,
  );
  await agree(
    agreements,
    agreementKeys.work(config.controller),
    { partitions: config.partitions, registeredBy },
    log,
    repartitioning,
  );
  await agree(
    agreements,
    agreementKeys.status(config.controller),
    { partitions: config.statusPartitions, registeredBy },
    log,
    repartitioning,
  );
  const client = deps.kube;
  await requireKubernetesVersion(client, log);
  // read-your-own-writes (ADR 0019): no read older than this process' own last write of the object
  // their outcome records hand them down to the next owner of a partition: consumed ones only
  const ownWrites = new OwnWrites(undefined, config.consume);
  const { staleReads, onceCalls, onceTakeovers } = runtimeMetrics(registry);
  const recorded = new ObjectReader(
    jsm,
    (path) => client.getIfExists<KubeObject>(path),
    serverAtLeast(bus.nc, '2.11.0') ? bus.nc : undefined,
    // without a watcher (Knative) the bus never records the own writes: nothing to wait for
    config.consume
      ? {
          writes: ownWrites,
          waitMs: config.readYourWritesWaitMs,
          onStaleRead: (outcome) => {
            staleReads.inc({ controller: config.controller, outcome });
          },
        }
      : undefined,
  );
  // Behind Knative with no watcher the stream records nothing: what it lacks
  // is read from the apiserver. Consuming the work stream, a watcher records
  // everything — but KUBEBUS_EVENTS is bounded and discards its oldest
  // messages when full, the only revision of a long-unchanged object among
  // them: "no record" of the object reconciled is asked of the apiserver (one
  // GET, for a deleted object), of what it owns it is not (a stale read costs
  // a redundant apply, never a lost change).
  const reader = config.consume
    ? new ApiserverFallbackReader(recorded, client, deps.plan.resources, log, { owned: false })
    : new ApiserverFallbackReader(recorded, client, deps.plan.resources, log);
  const status = new StatusPublisher(
    js,
    config.controller,
    config.statusPartitions,
    deps.statusWriter,
  );
  const parkedSkips = parkedSkipsMetric(registry);
  // Events go in the background (ADR 0029): a reconcile never waits for one
  const events = backgroundEvents(client, log, registry);
  const performed = PerformedCalls.of(
    await openOperatorBucket(bus.nc, performedBucketConfig(config.controller, topology), log),
    jsm,
    config.controller,
    async (key) => (await reader.live(key))?.metadata.uid,
    log,
    {
      takeoverMs: config.onceClaimTimeoutMs,
      maxPerObject: config.onceMaxPerObject,
      count: (outcome) => {
        if (outcome === 'taken_over') onceTakeovers.inc({ controller: config.controller });
        else onceCalls.inc({ controller: config.controller, outcome });
      },
    },
  );
  const reconciler = deps.plan.build({
    reader,
    client,
    status,
    bus,
    performed,
    fieldManager: config.fieldManager,
    instance: config.replicaId,
    claimRetryMs: config.claimRetryMs,
    applied: new AppliedObjects(),
    ownWrites,
    events,
    onParked: () => {
      parkedSkips.inc();
    },
    onStaleRead: (outcome) => {
      staleReads.inc({ controller: config.controller, outcome });
    },
  });

  const outcomes = new OutcomeRecorder(bus.nc, config.controller);
  const controller = new Controller(reconciler, {
    name: config.controller,
    // the reconcile's own writes go with it: the primary's next owner reads them
    onOutcome: (outcome) => {
      outcomes.record(outcome, ownWrites.handDown(outcome.key));
    },
    maxConcurrent: config.maxConcurrent,
    retry: config.retry,
    ...(deps.spans === undefined ? {} : { spans: deps.spans }),
    heartbeatMs: Math.max(1_000, config.ackWaitMs / 3),
    metrics: runtimeMetrics(registry),
    log,
    onDeadLetter: async (item, error, attempts) => {
      await park(
        item,
        error instanceof Error ? error.message : String(error),
        isKubebusError(error) ? error.code : ErrorCodes.ReconcileFailed,
        attempts,
        `${attempts} attempts failed: `,
      );
    },
  });

  /**
   * Parks a request for good: a dead letter `kubebus dlq redrive` sends back,
   * and its object marked Degraded (which also keeps it parked, degraded.ts),
   * with one Warning Event.
   */
  async function park(
    item: WorkItem,
    reason: string,
    code: string,
    attempts: number,
    summary: string,
  ): Promise<void> {
    const seq = await publishDeadLetter(
      js,
      deadLetter({
        origin: config.controller,
        key: item.key,
        reason,
        code,
        subject: subjects.work(
          config.controller,
          partitionOf(item.key, config.partitions),
          item.key,
        ),
        attempts,
        ...(item.eventId === undefined ? {} : { eventId: item.eventId }),
        ...(item.traceparent === undefined ? {} : { traceparent: item.traceparent }),
      }),
    );
    const object = await reader.read(item.key);
    if (object === undefined) return;
    // as `view` may read it, before the Event's note is sized around the hint
    const message = publicText(`${summary}${reason}`);
    const redrive = `; after the fix: kubebus dlq redrive ${String(seq)}`;
    await publishDegraded(status, item.key, object, message, item.traceparent);
    // one Warning Event per dead letter: what `kubectl describe` and `kubectl events` show
    events.record(object, {
      type: 'Warning',
      reason: DEAD_LETTERED,
      // the hint last and whole: a long reason is what is cut
      note: `${truncateUtf8(message, MAX_NOTE_BYTES - Buffer.byteLength(redrive))}${redrive}`,
      action: 'Reconcile',
      reportingController: `kubebus.dev/${config.controller}`,
      reportingInstance: config.replicaId.slice(0, 128),
    });
  }

  // deliveries never answered are bounded (ADR 0022): an object whose reconcile
  // kills its process is parked like a spent retry budget
  const deliveries = new AnsweredDeliveries(
    await new Kvm(bus.nc).open(Buckets.deliveries),
    config.controller,
    log,
  );
  const crashBound = {
    deliveries,
    maxCrashes: config.maxCrashes,
    park: async (item: WorkItem, crashes: number) => {
      log.error(
        { key: item.key, crashes, maxCrashes: config.maxCrashes },
        'its process died while reconciling it, time after time: parked in the DLQ',
      );
      await park(
        item,
        `${CRASHED_PROCESS} ${crashes} times (out of memory, a crash in native code, process.exit in reconcile, or hung past the ack wait of ${config.ackWaitMs} ms)`,
        ErrorCodes.CrashLoop,
        crashes,
        '',
      );
    },
  };

  const sweeper =
    deps.operatorVersion === undefined
      ? undefined
      : new UpgradeSweeper({
          nc: bus.nc,
          js,
          agreements,
          controller: config.controller,
          version: deps.operatorVersion,
          partitions: config.partitions,
          primary: deps.plan.primary,
          listLive: async () => {
            const { primary } = deps.plan;
            const found: { key: ObjectKey; uid: string }[] = [];
            // restricted to some namespaces, the operator may list only there (its Roles)
            const scopes: (string | undefined)[] =
              primary.namespaced && config.watchNamespaces.length > 0
                ? [...config.watchNamespaces]
                : [undefined];
            for (const namespace of scopes)
              for await (const page of listPages(client, {
                resource: primary,
                ...(namespace === undefined ? {} : { namespace }),
                metadataOnly: { kind: primary.kind },
              }))
                for (const item of page.items)
                  found.push({
                    key: {
                      group: primary.group,
                      resource: primary.resource,
                      namespace: item.metadata.namespace ?? '',
                      name: item.metadata.name,
                    },
                    uid: item.metadata.uid,
                  });
            return found;
          },
          log,
        });
  const batchedReads = serverAtLeast(bus.nc, '2.11.0');
  const handedDown = new HandedDownWrites(
    outcomeRecordsSince(
      { nc: bus.nc, jsm, batchVia: batchedReads ? bus.nc : undefined },
      config.controller,
      log,
    ),
    ownWrites,
    {
      partitions: config.partitions,
      windowMs: HANDED_DOWN_WINDOW_MS,
      maxRecords: HANDED_DOWN_MAX_RECORDS,
      deadlineMs: HANDED_DOWN_DEADLINE_MS,
    },
    log,
  );
  let partitions: RunningPartitions | undefined;
  const later = config.consume ? await laterRequeuesOf({ js, jsm }, config, log) : undefined;
  if (config.consume) {
    partitions = await runPartitioned(
      { js, jsm, leases, controller, log },
      {
        stream: Streams.work,
        durable: (partition) => durableNames.work(config.controller, partition),
        leaseGroup: leaseGroups.work(config.controller),
        filterOf: (partition) => subjects.workOfPartition(config.controller, partition),
        ackWaitMs: config.ackWaitMs,
        maxAckPending: pendingPerPartition(config.maxConcurrent, config.partitions),
        replicaId: config.replicaId,
        partitions: config.partitions,
        renewEveryMs: config.leaseRenewMs,
        // read-your-own-writes across owners: what the partition's last owner wrote, and
        // the status intents it left pending (a batched read: nats-server >= 2.11)
        // (each settled before the partition is consumed, whatever the other does)
        beforeConsuming: async (partition: number) => {
          if (!batchedReads) status.pendingUnknown();
          const taken = await Promise.allSettled([
            handedDown.inherit(partition),
            batchedReads
              ? status.inherit((key) => partitionOf(key, config.partitions) === partition)
              : 0,
          ]);
          for (const result of taken)
            if (result.status === 'rejected')
              log.warn({ err: result.reason, partition }, 'could not read what to hand down');
        },
        ...(sweeper === undefined
          ? {}
          : { onAcquired: (partition: number) => sweeper.onAcquired(partition) }),
        parse: (message) => {
          const parsed = parseWorkMark(message.data);
          if (!parsed.ok) return parsed;
          const { mark } = parsed;
          const { primary } = deps.plan;
          if (mark.key.group !== primary.group || mark.key.resource !== primary.resource)
            return {
              ok: false,
              reason: `work mark for ${mark.key.resource}.${mark.key.group}, not this controller's ${primary.resource}.${primary.group}`,
            };
          return {
            ok: true,
            key: mark.key,
            ...(mark.traceparent === undefined ? {} : { traceparent: mark.traceparent }),
            ...(mark.eventId === undefined ? {} : { eventId: mark.eventId }),
            ...(mark.cause === undefined ? {} : { cause: mark.cause }),
            reason: mark.reason,
            ...(mark.failures === undefined ? {} : { failedBefore: mark.failures }),
          };
        },
        onMalformed: (message, reason) => parkMalformed(js, config.controller, message, reason),
        crashBound,
        ...(later === undefined ? {} : { later }),
      },
    );
  }

  const running = partitions;
  const lag =
    running === undefined
      ? undefined
      : watchConsumerLag({
          jsm,
          registry,
          stream: Streams.work,
          consumers: () => running.held().map((p) => durableNames.work(config.controller, p)),
          everyMs: 5_000,
        });

  const http =
    config.http.port > 0
      ? await startHttpSource(
          controller,
          {
            ...config.http,
            maxPayload: () => bus.nc.info?.max_payload ?? 1024 * 1024,
            authenticator: await sinkAuthenticator(config.http.auth, client, log),
            primary: deps.plan.primary,
            resources: deps.plan.resources,
            client,
            ready: () => (bus.connected() ? true : 'nats is not connected'),
            // one letter per CloudEvent, however often Knative sends it (Nats-Msg-Id)
            deadLetter: ({ key, reason, eventId, msgId, traceparent }) =>
              publishDeadLetter(
                js,
                deadLetter({
                  origin: config.controller,
                  key,
                  reason,
                  code: ErrorCodes.DeliveryFailed,
                  subject: subjects.work(
                    config.controller,
                    partitionOf(key, config.partitions),
                    key,
                  ),
                  attempts: 1,
                  eventId,
                  ...(traceparent === undefined ? {} : { traceparent }),
                }),
                `${config.controller}/${msgId}`,
              ).then(() => undefined),
          },
          log,
        )
      : undefined;
  log.info({ partitions: partitions?.held(), http: http?.port }, 'reconciler started');

  return {
    httpPort: http?.port,
    async stop() {
      lag?.stop();
      await http?.close();
      await partitions?.stop();
      await later?.stop();
      await controller.stop();
      const [unsent] = await Promise.all([
        events.stop(EVENTS_STOP_MS),
        // what was given back is recorded as answered before the connection goes
        deliveries.flush(),
      ]);
      if (unsent > 0) log.warn({ unsent }, 'stopped before every Event was recorded');
      log.info('reconciler stopped');
    },
  };
}

/**
 * The operator's waiting requeues, pulled by this replica (later-requeues.ts),
 * their consumer created where this user may. While it is missing (a topology
 * step of an older version not run again) each requeue waits in its
 * delivery, as before there was one, and the consumer is looked for again.
 */
async function laterRequeuesOf(
  bus: { readonly js: JetStreamClient; readonly jsm: JetStreamManager },
  config: ReconcilerConfig,
  log: Logger,
): Promise<LaterRequeues> {
  await applyConsumers(
    bus.jsm,
    [laterConsumer(config.controller, config.ackWaitMs)],
    'where-allowed',
  ).catch((error: unknown) => {
    log.warn({ err: error }, 'could not make sure the waiting requeues have their consumer');
  });
  const later = new LaterRequeues(bus.js, config.controller, config.partitions, log);
  later.start();
  return later;
}
