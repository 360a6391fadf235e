// The streams and KV buckets of kubebus, declared once so every service and the
// CLI agree on them (topology-apply.ts creates and checks them).
import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
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

/** The KV buckets, with the options they are created with. */
export function bucketConfigs(
  options: TopologyOptions,
): { name: string; history: number; replicas: number; ttl?: number }[] {
  return [
    { name: Buckets.cursors, history: 1, replicas: options.replicas },
    { name: Buckets.agreements, history: 1, replicas: options.replicas },
    { name: Buckets.leases, history: 1, replicas: options.replicas, ttl: options.leaseTtlMs },
  ];
}
