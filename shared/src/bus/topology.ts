// The streams and KV buckets of kubebus, declared once so every service and the
// CLI agree on them (topology-apply.ts creates and checks them).
import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { subjects } from './subjects.js';
import { defaultStorageLimits, type StorageLimits } from './topology-limits.js';

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
  /** which deliveries of a work mark were answered: the rest killed their process (answered-deliveries.ts) */
  deliveries: 'kubebus_deliveries',
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
  /** max_bytes of every stream and bucket, max_msg_size of the DLQ (topology-limits.ts) */
  readonly limits: StorageLimits;
  /**
   * The sizes the topology step was given (`--storage`): set exactly, a
   * shrink included. Any other size a stream already has is kept — streams
   * are shared by every operator's topology step, and one run without the
   * flag must not undo another's sizes; a new or unbounded stream gets the
   * default. Unset: every size as `limits` says.
   */
  readonly sized?: ReadonlySet<keyof StorageLimits>;
}

export const defaultTopology: TopologyOptions = {
  replicas: 1,
  historyPerObject: 64,
  eventsMaxAgeMs: 7 * 24 * 3_600_000,
  deadLettersMaxAgeMs: 30 * 24 * 3_600_000,
  duplicateWindowMs: 10 * 60_000,
  leaseTtlMs: 15_000,
  limits: defaultStorageLimits,
};

const ns = (ms: number) => ms * 1_000_000;

export function streamConfigs(options: TopologyOptions): StreamConfig[] {
  const common = {
    storage: StorageType.File,
    num_replicas: options.replicas,
    duplicate_window: ns(options.duplicateWindowMs),
    allow_direct: true,
  };
  const { limits } = options;
  // Work queues keep one pending message per subject: a burst for one object
  // coalesces into the latest mark (latest wins). Full, they refuse new
  // subjects (discard new) instead of dropping pending work; the publisher
  // retries (topology-limits.ts).
  const workQueue = {
    ...common,
    retention: RetentionPolicy.Workqueue,
    max_msgs_per_subject: 1,
    discard: DiscardPolicy.New,
  };
  return [
    {
      ...common,
      name: Streams.events,
      subjects: [subjects.allEvents],
      retention: RetentionPolicy.Limits,
      max_msgs_per_subject: options.historyPerObject,
      max_age: ns(options.eventsMaxAgeMs),
      max_bytes: limits.eventsBytes,
      discard: DiscardPolicy.Old,
    } as StreamConfig,
    {
      ...workQueue,
      name: Streams.work,
      subjects: [subjects.allWork],
      max_bytes: limits.workBytes,
    } as StreamConfig,
    {
      ...workQueue,
      name: Streams.status,
      subjects: [subjects.allStatus],
      max_bytes: limits.statusBytes,
    } as StreamConfig,
    {
      ...common,
      name: Streams.deadLetters,
      subjects: [subjects.allDeadLetters],
      retention: RetentionPolicy.Limits,
      max_age: ns(options.deadLettersMaxAgeMs),
      max_bytes: limits.deadLettersBytes,
      max_msg_size: limits.deadLetterBytes,
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
      max_bytes: limits.outcomesBytes,
      discard: DiscardPolicy.Old,
    } as StreamConfig,
  ];
}

export interface BucketConfig {
  readonly name: string;
  readonly history: number;
  readonly replicas: number;
  readonly ttl?: number;
  /** false: every read from the stream's leader, never a replica behind it */
  readonly allow_direct?: boolean;
  /** the bucket's stream's max_bytes (KV buckets discard new: a put past it is refused) */
  readonly max_bytes: number;
}

/** The KV buckets, with the options they are created with. */
export function bucketConfigs(options: TopologyOptions): BucketConfig[] {
  const common = { history: 1, replicas: options.replicas, max_bytes: options.limits.bucketBytes };
  return [
    { name: Buckets.cursors, ...common },
    { name: Buckets.agreements, ...common },
    { name: Buckets.leases, ...common, ttl: options.leaseTtlMs },
    // a record outlives any retry delay; a message settled removes its own
    { name: Buckets.deliveries, ...common, ttl: options.eventsMaxAgeMs },
  ];
}

/** An operator's bucket of records of its external calls: its NATS user alone may write and purge it. */
export const performedBucketOf = (controller: string) => `kubebus_performed_${controller}`;

/**
 * An operator's records of its external calls (ctx.once, ADR 0035): a bucket
 * of its own, made with its durable consumers by `kubebus topology apply
 * <operator>`, so its NATS user may purge a gone object's records and a
 * tenant churning one operator's objects fills that operator's bucket only.
 * No TTL: an object's records live as long as it does.
 */
export function performedBucketConfig(controller: string, options: TopologyOptions): BucketConfig {
  return {
    name: performedBucketOf(controller),
    history: 1,
    replicas: options.replicas,
    // a replica behind its leader would answer "no record" for a call just made
    allow_direct: false,
    max_bytes: options.limits.performedBytes,
  };
}

/** The storage limits a stream's size fields are set from (what `--storage` names). */
export function sizeLimitsOf(
  stream: string,
): Partial<Record<'max_bytes' | 'max_msg_size', keyof StorageLimits>> {
  switch (stream) {
    case Streams.events:
      return { max_bytes: 'eventsBytes' };
    case Streams.work:
      return { max_bytes: 'workBytes' };
    case Streams.status:
      return { max_bytes: 'statusBytes' };
    case Streams.deadLetters:
      return { max_bytes: 'deadLettersBytes', max_msg_size: 'deadLetterBytes' };
    case Streams.outcomes:
      return { max_bytes: 'outcomesBytes' };
    default:
      return stream.startsWith(`KV_${performedBucketOf('')}`)
        ? { max_bytes: 'performedBytes' }
        : { max_bytes: 'bucketBytes' };
  }
}
