// Runs a runtime Controller over a partitioned work stream: this replica
// consumes the partitions it holds leases on, and hands a partition over only
// after its running reconciles finish — one reconcile per object at a time
// across all replicas, with no leader.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '../obs/logger.js';
import type { Controller } from '../runtime/controller.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { WorkItem } from '../runtime/work-item.js';
import type { LeaseBucket } from './lease-bucket.js';
import { PartitionConsumers, type PartitionConsumerOptions } from './partition-consumers.js';
import { PartitionLeases } from './partition-leases.js';
import { partitionOf } from './subjects.js';
import { openConsumers } from './consumer-apply.js';
import { defaultTopology } from './topology.js';

export interface PartitionedControllerOptions extends Omit<
  PartitionConsumerOptions,
  'dispatch' | 'log'
> {
  readonly replicaId: string;
  /** the partition consumers' ack_wait */
  readonly ackWaitMs: number;
  /** the partition consumers' max_ack_pending: delivered and not yet answered (pendingPerPartition) */
  readonly maxAckPending: number;
  /** who shares the leases (leaseGroups in partition-leases.ts) */
  readonly leaseGroup: string;
  readonly partitions: number;
  readonly renewEveryMs: number;
  /** the lease bucket's TTL (defaultTopology.leaseTtlMs unless the topology says otherwise) */
  readonly leaseTtlMs?: number;
  /**
   * Awaited for each partition this replica takes, before it consumes it (the
   * own writes handed down, handed-down-writes.ts); a failure is logged, and
   * the partition consumed all the same.
   */
  readonly beforeConsuming?: (partition: number) => Promise<unknown>;
  /** told of each partition this replica takes, once it consumes it (the upgrade sweep) */
  readonly onAcquired?: (partition: number) => Promise<unknown>;
}

/**
 * Requests delivered per partition before they are settled (its consumer's
 * max_ack_pending; a pull asks for more and stands until there is room). Few: a request left
 * in the work stream still coalesces with newer marks for its object (one
 * per subject), while one pulled early only waits in memory, heartbeated
 * (a NATS message every ackWait / 3). The workers' share of the partitions,
 * plus one waiting behind each, keeps every worker fed.
 */
export function pendingPerPartition(maxConcurrent: number, partitions: number): number {
  return Math.ceil(maxConcurrent / partitions) + 1;
}

export interface RunningPartitions {
  held(): number[];
  stop(): Promise<void>;
}

export async function runPartitioned(
  deps: {
    js: JetStreamClient;
    jsm: JetStreamManager;
    leases: LeaseBucket;
    controller: Controller;
    log: Logger;
  },
  options: PartitionedControllerOptions,
): Promise<RunningPartitions> {
  const { controller, log } = deps;
  const inPartition = (partition: number) => (key: ObjectKey) =>
    partitionOf(key, options.partitions) === partition;
  // A message of a partition whose lease this replica can no longer trust goes back;
  // one it runs asks the lease again before each of its writes.
  const dispatch = (item: WorkItem) => {
    const partition = partitionOf(item.key, options.partitions);
    if (leases.holds(partition))
      controller.dispatch({ ...item, mayAct: () => leases.holds(partition) });
    else item.retry(0);
  };
  // every partition's consumer, before any lease: created where the user may, else waited for
  await openConsumers(
    deps.jsm,
    Array.from({ length: options.partitions }, (_, partition) => ({
      stream: options.stream,
      durable: options.durable(partition),
      filter: options.filterOf(partition),
      ackWaitMs: options.ackWaitMs,
      maxAckPending: options.maxAckPending,
    })),
    log,
  );
  const consumers = new PartitionConsumers(deps.js, { ...options, dispatch, log });
  const leases = new PartitionLeases(deps.leases, {
    group: options.leaseGroup,
    replicaId: options.replicaId,
    partitions: options.partitions,
    renewEveryMs: options.renewEveryMs,
    ttlMs: options.leaseTtlMs ?? defaultTopology.leaseTtlMs,
    log,
    onAcquired: async (partition) => {
      await options.beforeConsuming?.(partition).catch((error: unknown) => {
        log.warn({ err: error, partition }, 'before consuming a partition taken');
      });
      await consumers.start(partition);
      options.onAcquired?.(partition).catch((error: unknown) => {
        log.warn({ err: error, partition }, 'after taking a partition');
      });
    },
    onReleasing: async (partition) => {
      await consumers.stop(partition);
      controller.release(inPartition(partition));
      await controller.drain(inPartition(partition));
    },
    onLost: (partition) => {
      void consumers.stop(partition);
      controller.revoke(inPartition(partition));
    },
  });
  await leases.start();
  return {
    held: () => leases.held,
    stop: async () => {
      await leases.stop();
      await consumers.stopAll();
    },
  };
}
