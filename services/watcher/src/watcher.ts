// The watcher service, assembled: discovery, the streams, one ResourceWatcher
// per watched resource, the resync timer, and the health of it all.
import {
  agree,
  agreementKeys,
  defaultTopology,
  Buckets,
  InboxPublisher,
  OrderedPublisher,
  openJetStream,
  origins,
  type BusConnection,
} from '@kubebus/shared/bus';
import {
  listPages,
  managedSelector,
  type KubeClient,
  requireKubernetesVersion,
} from '@kubebus/shared/kube';
import { classifyFailure, FailureClasses } from '@kubebus/shared/errors';
import { spans, type Logger, type Registry, type Spans } from '@kubebus/shared/obs';
import { backoffDelay } from '@kubebus/shared/runtime';
import { Kvm } from '@nats-io/kv';
import { ChangePublisher } from './change-publisher.js';
import type { WatcherConfig } from './config.js';
import { CursorStore, cursorKey } from './cursor-store.js';
import { PartitionGuard } from './partition-guard.js';
import { KnownObjects } from './known-objects.js';
import { watcherMetrics } from './metrics.js';
import { ResourceWatcher } from './resource-watcher.js';
import { resyncOnce, type ResyncSource } from './resync.js';
import {
  NotServedError,
  discoverTargets,
  type WatchedResource,
  type WatchTargets,
} from './targets.js';

export interface RunningWatcher {
  /** the watch loops are alive */
  live(): true | string;
  /** initial lists done and NATS connected */
  ready(): true | string;
  stop(): Promise<void>;
}

export async function startWatcher(deps: {
  readonly config: WatcherConfig;
  /** the process's apiserver client: shared by the roles of one process (one connection, one throttle) */
  readonly kube: KubeClient;
  readonly bus: BusConnection;
  readonly log: Logger;
  readonly registry: Registry;
  /** a span per published change; traceparents only without it */
  readonly spans?: Spans;
}): Promise<RunningWatcher> {
  const { config, bus, log } = deps;
  const metrics = watcherMetrics(deps.registry);
  const client = deps.kube;
  const abort = new AbortController();
  await requireKubernetesVersion(client, log);

  await openJetStream(bus.nc, { ...defaultTopology, replicas: deps.config.streamReplicas }, log);
  // the reconcilers consume the partitions this publishes to: the counts must agree
  const agreements = await new Kvm(bus.nc).open(Buckets.agreements);
  const guard = new PartitionGuard(
    agreements,
    config.controllers.map((controller) => controller.name),
    config.partitions,
    (reason) => {
      log.error({ partitions: config.partitions }, reason);
      abort.abort();
    },
  );
  const cursors = new CursorStore(
    await new Kvm(bus.nc).open(Buckets.cursors),
    config.watcherId,
    config.operator,
    () => guard.check(),
  );
  for (const controller of config.controllers)
    await agree(
      agreements,
      agreementKeys.work(controller.name),
      {
        partitions: config.partitions,
        for: controller.for,
        // once each: a kind both owned and watched is one interest
        owns: [
          ...new Set([
            ...controller.owns,
            ...(controller.watches ?? []).map((watch) => watch.resource),
          ]),
        ],
        registeredBy: `watcher ${config.watcherId}`,
      },
      log,
    );
  const targets = await retrying(
    () => discoverTargets(client, config.controllers),
    log,
    config,
    abort.signal,
  );

  // acknowledgements on an inbox of its own: a quarter of js.publish's CPU (inbox-publisher.ts)
  const publisher = new OrderedPublisher(new InboxPublisher(bus.nc), {
    maxInFlight: config.maxInFlight,
    retry: config.backoff,
    ackTimeoutMs: 5_000,
    maxRejections: 3,
    onRetry: (message, attempt, error) => {
      metrics.publishRetries.inc();
      log.warn(
        { subject: message.subject, msgId: message.msgId, attempt, err: error },
        'publish failed; retrying',
      );
    },
    onPublished: (message, durationMs, duplicate) => {
      const stream = message.subject.split('.')[1] ?? '';
      metrics.published.inc({ stream, duplicate: String(duplicate) });
      metrics.publishDuration.observe(durationMs / 1_000);
    },
  });
  const changes = new ChangePublisher({
    publisher,
    targets,
    partitions: config.partitions,
    source: client.server,
    maxPayload: () => bus.nc.info?.max_payload ?? 1024 * 1024,
    log,
    metrics,
    spans: deps.spans ?? spans(),
    origin: origins.watcher(config.operator),
  });

  const watchers: ResourceWatcher[] = [];
  const resyncSources: ResyncSource[] = [];
  for (const resource of targets.resources) {
    const known = new KnownObjects();
    // what each object was last published as: its `map` watches' answer, for its next change
    await known.seed(bus.nc, resource, (object) => {
      targets.recall(resource, object);
    });
    // One watch per namespace asked for (cluster-scoped kinds and "all": one watch).
    const namespaces =
      resource.namespaced && config.namespaces.length > 0 ? config.namespaces : [''];
    const labelSelector = targets.ownedOnly(resource)
      ? managedSelector(config.labelSelector)
      : config.labelSelector;
    for (const namespace of namespaces) {
      watchers.push(
        new ResourceWatcher(
          resource,
          {
            client,
            changes,
            cursors,
            cursorKey: cursorKey(resource, namespace, labelSelector),
            known,
            metrics,
            log: log.child({ resource: resource.resource, group: resource.group, namespace }),
          },
          { ...config, namespace, labelSelector },
        ),
      );
    }
    const controllers = targets.primaryOf(resource);
    if (controllers.length > 0) resyncSources.push({ resource, controllers, known });
  }

  // what each primary references, from the apiserver, before any watch runs: a
  // watch resumed from its cursor replays only what changed since
  for (const resource of targets.resources.filter((r) => targets.indexes(r)))
    await retrying(
      () => indexReferences(client, targets, resource, config),
      log,
      config,
      abort.signal,
    );

  const loops = new Map<ResourceWatcher, string>();
  const runs = watchers.map((watcher) => {
    loops.set(watcher, 'running');
    return watcher.run(abort.signal).then(
      () => loops.set(watcher, 'stopped'),
      (error: unknown) => {
        log.fatal({ err: error, resource: watcher.resource.resource }, 'watch loop crashed');
        loops.set(watcher, `crashed: ${(error as Error).message}`);
      },
    );
  });
  const resync = scheduleResync(
    resyncSources,
    changes,
    metrics,
    config.resyncPeriodMs,
    log,
    abort.signal,
  );
  log.info(
    {
      resources: targets.resources.map((r) => r.resource),
      controllers: config.controllers.map((c) => c.name),
    },
    'watcher started',
  );

  return {
    live() {
      if (guard.moved !== undefined) return guard.moved;
      for (const [watcher, state] of loops) {
        if (state !== 'running' && !abort.signal.aborted)
          return `${watcher.resource.resource}: ${state}`;
      }
      return true;
    },
    // not the bus: a NATS outage is every replica's (ADR 0036)
    ready() {
      const pending = watchers.filter((w) => !w.synced).map((w) => w.resource.resource);
      return pending.length === 0 ? true : `initial list pending: ${pending.join(', ')}`;
    },
    async stop() {
      abort.abort();
      clearTimeout(resync.timer);
      await Promise.all(runs);
      await publisher.flush();
      log.info('watcher stopped');
    },
  };
}

export type { WatchTargets };

function scheduleResync(
  sources: readonly ResyncSource[],
  changes: ChangePublisher,
  metrics: ReturnType<typeof watcherMetrics>,
  periodMs: number,
  log: Logger,
  signal: AbortSignal,
): { timer: NodeJS.Timeout | undefined } {
  const handle: { timer: NodeJS.Timeout | undefined } = { timer: undefined };
  const next = () => {
    // 10% jitter so a fleet of watchers does not resync in step
    const delay = periodMs * (0.9 + Math.random() * 0.2);
    handle.timer = setTimeout(() => {
      if (signal.aborted) return;
      resyncOnce(sources, changes, metrics, periodMs).then(
        (marks) => {
          log.info({ marks }, 'resync done');
          next();
        },
        (error: unknown) => {
          // the apiserver away or throttling is waited out until the next one
          if (classifyFailure(error) === FailureClasses.Transient)
            log.warn({ err: error }, 'resync failed; the next one will try again');
          else log.error({ err: error }, 'resync failed');
          next();
        },
      );
    }, delay);
  };
  next();
  return handle;
}

/** Lists the primaries of `resource` (in the watched namespaces) into the reference index. */
async function indexReferences(
  client: KubeClient,
  targets: WatchTargets,
  resource: WatchedResource,
  config: WatcherConfig,
): Promise<void> {
  const namespaces = resource.namespaced && config.namespaces.length > 0 ? config.namespaces : [''];
  for (const namespace of namespaces)
    for await (const page of listPages(
      client,
      {
        resource,
        ...(namespace === '' ? {} : { namespace }),
        ...(config.labelSelector === undefined ? {} : { labelSelector: config.labelSelector }),
      },
      config.listPageSize,
    ))
      for (const primary of page.items) targets.observe(resource, primary, 'add');
}

async function retrying<T>(
  attempt: () => Promise<T>,
  log: Logger,
  config: WatcherConfig,
  signal: AbortSignal,
): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await attempt();
    } catch (error) {
      if (signal.aborted) throw error;
      const delay = backoffDelay(config.backoff, failures);
      // one that is only waited for says so in a line; anything else with its stack
      if (error instanceof NotServedError)
        log.warn({ delayMs: delay }, `discovery: ${error.message}; retrying`);
      else log.warn({ err: error, delayMs: delay }, 'discovery failed; retrying');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
