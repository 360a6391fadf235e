// The durable consumers of one operator: one per partition of its work (its
// reconcilers pull it) and one per partition of its status (its status
// writers pull it). Declared once: the topology step creates them as the NATS
// admin (`kubebus topology apply <operator>`); a service only gets them, so
// its NATS user needs no right to create, change or delete a consumer.
import { AckPolicy, DeliverPolicy, type ConsumerConfig } from '@nats-io/jetstream';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

export interface DurableConsumerSpec {
  readonly stream: string;
  readonly durable: string;
  readonly filter: string;
  readonly ackWaitMs: number;
  readonly maxAckPending: number;
}

/**
 * Durable names, per stream. Operator names are DNS labels (no '_'), so
 * `<controller>_p<n>` and `<controller>_status_p<n>` never collide.
 */
export const durableNames = {
  work: (controller: string, partition: number) => `${controller}_p${partition}`,
  status: (controller: string, partition: number) => `${controller}_status_p${partition}`,
  /** the requeues waiting for their time (later-requeues.ts), every replica pulling it */
  later: (controller: string) => `${controller}_later`,
} as const;

/**
 * Requeues of the operator waiting at once before the later consumer stops
 * delivering more: each waits on nats-server (a nak with its delay), not in a
 * partition, so this bounds nats-server's bookkeeping, not the work.
 */
export const LATER_MAX_PENDING = 100_000;

/** How one role consumes its partitions: the settings its consumers are created with. */
export interface ConsumingRole {
  readonly partitions: number;
  readonly ackWaitMs: number;
  readonly maxAckPending: number;
}

/** Every durable consumer of the controller: work partitions, status partitions, then the requeues waiting. */
export function operatorConsumers(
  controller: string,
  roles: { readonly work: ConsumingRole; readonly status: ConsumingRole },
): DurableConsumerSpec[] {
  const range = (n: number) => Array.from({ length: n }, (_, partition) => partition);
  return [
    ...range(roles.work.partitions).map((partition) => ({
      stream: Streams.work,
      durable: durableNames.work(controller, partition),
      filter: subjects.workOfPartition(controller, partition),
      ackWaitMs: roles.work.ackWaitMs,
      maxAckPending: roles.work.maxAckPending,
    })),
    ...range(roles.status.partitions).map((partition) => ({
      stream: Streams.status,
      durable: durableNames.status(controller, partition),
      filter: subjects.statusOfPartition(controller, partition),
      ackWaitMs: roles.status.ackWaitMs,
      maxAckPending: roles.status.maxAckPending,
    })),
    laterConsumer(controller, roles.work.ackWaitMs),
  ];
}

/** The operator's one consumer of requeues waiting for their time, every reconciler pulling it. */
export function laterConsumer(controller: string, ackWaitMs: number): DurableConsumerSpec {
  return {
    stream: Streams.work,
    durable: durableNames.later(controller),
    filter: subjects.laterOf(controller),
    ackWaitMs,
    maxAckPending: LATER_MAX_PENDING,
  };
}

/** The consumer's configuration on the server. */
export function consumerConfigOf(spec: DurableConsumerSpec): Partial<ConsumerConfig> {
  return {
    durable_name: spec.durable,
    filter_subject: spec.filter,
    ack_policy: AckPolicy.Explicit,
    ack_wait: spec.ackWaitMs * 1_000_000,
    // attempts are counted by the runtime (retry budget, then the DLQ), and
    // deaths by the delivery records (ADR 0022): the server's bound would count
    // every nak (requeue-after, waits for a dependency) and strand what it stops
    max_deliver: -1,
    max_ack_pending: spec.maxAckPending,
    deliver_policy: DeliverPolicy.All,
  };
}

/** The fields of the declaration the server's consumer does not have. */
export function differingConsumerFields(
  spec: DurableConsumerSpec,
  actual: Partial<ConsumerConfig>,
): string[] {
  const wanted = consumerConfigOf(spec);
  return (Object.keys(wanted) as (keyof ConsumerConfig)[]).filter(
    (field) => wanted[field] !== actual[field],
  );
}
