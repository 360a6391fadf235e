// The streams and KV buckets of kubebus, declared once so every service and the
// CLI agree on them, and created or updated idempotently at start.
import {
  jetstream,
  jetstreamManager,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { subjects } from './subjects.js';

export const Streams = {
  events: 'KUBEBUS_EVENTS',
  work: 'KUBEBUS_WORK',
  status: 'KUBEBUS_STATUS',
  deadLetters: 'KUBEBUS_DLQ',
  outcomes: 'KUBEBUS_OUTCOMES',
} as const;

export const Buckets = {
  /** watch cursors (resourceVersion per watched resource and scope) */
  cursors: 'kubebus_cursors',
  /** partition leases of the reconcilers */
  leases: 'kubebus_leases',
  /** what each controller's processes agreed on (partition counts, interests) */
  agreements: 'kubebus_agreements',
} as const;

export interface TopologyOptions {
  /** stream replicas (1 for a single server, 3 in a cluster) */
  readonly replicas: number;
  /** revisions kept per object in KUBEBUS_EVENTS */
  readonly historyPerObject: number;
  readonly eventsMaxAgeMs: number;
  readonly deadLettersMaxAgeMs: number;
  /** window in which equal Nats-Msg-Ids are stored once */
  readonly duplicateWindowMs: number;
  /** lease lifetime: a reconciler that stops renewing loses its partitions after it */
  readonly leaseTtlMs: number;
}

export const defaultTopology: TopologyOptions = {
  replicas: 1,
  historyPerObject: 64,
  eventsMaxAgeMs: 7 * 24 * 3_600_000,
  deadLettersMaxAgeMs: 30 * 24 * 3_600_000,
  duplicateWindowMs: 10 * 60_000,
  leaseTtlMs: 15_000,
};

const ns = (ms: number) => ms * 1_000_000;

export function streamConfigs(options: TopologyOptions): StreamConfig[] {
  const common = {
    storage: StorageType.File,
    num_replicas: options.replicas,
    duplicate_window: ns(options.duplicateWindowMs),
    allow_direct: true,
  };
  // Work queues keep one pending message per subject: a burst for one object
  // coalesces into the latest mark (latest wins).
  const workQueue = {
    ...common,
    retention: RetentionPolicy.Workqueue,
    max_msgs_per_subject: 1,
    discard: DiscardPolicy.Old,
  };
  return [
    {
      ...common,
      name: Streams.events,
      subjects: [subjects.allEvents],
      retention: RetentionPolicy.Limits,
      max_msgs_per_subject: options.historyPerObject,
      max_age: ns(options.eventsMaxAgeMs),
      discard: DiscardPolicy.Old,
    } as StreamConfig,
    { ...workQueue, name: Streams.work, subjects: [subjects.allWork] } as StreamConfig,
    { ...workQueue, name: Streams.status, subjects: [subjects.allStatus] } as StreamConfig,
    {
      ...common,
      name: Streams.deadLetters,
      subjects: [subjects.allDeadLetters],
      retention: RetentionPolicy.Limits,
      max_age: ns(options.deadLettersMaxAgeMs),
      discard: DiscardPolicy.Old,
    } as StreamConfig,
    {
      // what each controller did with each object: as many records as revisions kept
      ...common,
      name: Streams.outcomes,
      subjects: [subjects.allOutcomes],
      retention: RetentionPolicy.Limits,
      max_msgs_per_subject: options.historyPerObject,
      max_age: ns(options.eventsMaxAgeMs),
      max_msg_size: 8 * 1024,
      discard: DiscardPolicy.Old,
    } as StreamConfig,
  ];
}

/** Creates what is missing and updates what differs; safe to run from every replica. */
export async function ensureTopology(
  nc: NatsConnection,
  jsm: JetStreamManager,
  options: TopologyOptions = defaultTopology,
): Promise<void> {
  for (const config of streamConfigs(options)) {
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (error) {
      if (
        !(error instanceof JetStreamApiError) ||
        error.code !== JetStreamApiCodes.StreamNotFound
      ) {
        throw error;
      }
      try {
        await jsm.streams.add(config);
      } catch (addError) {
        // another replica created it meanwhile
        if (!(addError instanceof JetStreamApiError) || addError.status !== 400) throw addError;
      }
    }
  }
  const kvm = new Kvm(nc);
  await kvm.create(Buckets.cursors, { history: 1, replicas: options.replicas });
  await kvm.create(Buckets.agreements, { history: 1, replicas: options.replicas });
  await kvm.create(Buckets.leases, {
    history: 1,
    replicas: options.replicas,
    ttl: options.leaseTtlMs,
  });
}

/** The JetStream clients of a service, once the topology it relies on exists. */
export async function openJetStream(
  nc: NatsConnection,
  options: TopologyOptions = defaultTopology,
): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
  const jsm = await jetstreamManager(nc);
  await ensureTopology(nc, jsm, options);
  return { js: jetstream(nc), jsm };
}
