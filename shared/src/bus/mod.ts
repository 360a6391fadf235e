// The bus: subjects, streams, connection and publishing on NATS JetStream.
export { EMPTY_TOKEN, decodeToken, encodeToken } from './subject-token.js';
export {
  MAX_SUBJECT_BYTES,
  SUBJECT_ROOT,
  keyOfSubject,
  partitionOf,
  subjects,
} from './subjects.js';
export {
  Buckets,
  Streams,
  bucketConfigs,
  defaultTopology,
  performedBucketConfig,
  performedBucketOf,
  streamConfigs,
} from './topology.js';
export type { BucketConfig, TopologyOptions } from './topology.js';
export {
  defaultStorageLimits,
  isStreamFull,
  parseByteSize,
  parseStorageLimits,
  parseStorageSizes,
} from './topology-limits.js';
export type { StorageLimits } from './topology-limits.js';
export {
  applyBucket,
  applyTopology,
  isPermissionRefusal,
  openJetStream,
  openOperatorBucket,
} from './topology-apply.js';
export type { TopologyChange, TopologyMode } from './topology-apply.js';
export { applyConsumers, openConsumers } from './consumer-apply.js';
export { LEGACY_STATUS_SUBJECTS, removeLegacyLayout } from './legacy-layout.js';
export {
  consumerConfigOf,
  durableNames,
  laterConsumer,
  operatorConsumers,
} from './durable-consumers.js';
export { removeRetiredPartitions } from './retired-partitions.js';
export type { ConsumingRole, DurableConsumerSpec } from './durable-consumers.js';
export { MIN_NATS_VERSION, connectBus, serverAtLeast } from './connect.js';
export { writesCoalesced } from './write-coalescing.js';
export type { BusConnection, BusConnectionOptions } from './connect.js';
export { natsTlsOf, urlsRequireTls } from './nats-tls.js';
export type { BusTlsOptions } from './nats-tls.js';
export { InboxPublisher } from './inbox-publisher.js';
export type { StoredAck, StorePublisher, StorePublishOptions } from './inbox-publisher.js';
export { OrderedPublisher, PublishRejectedError } from './ordered-publisher.js';
export type { OutgoingMessage, PublisherOptions, Submitted } from './ordered-publisher.js';
export { DeadLetterSchema, deadLetter, parkMalformed, publishDeadLetter } from './dead-letter.js';
export type { DeadLetter } from './dead-letter.js';
export {
  MAX_CAUSE,
  WorkMarkSchema,
  WorkReasons,
  encodeWorkMark,
  parseWorkMark,
} from './work-mark.js';
export type { WorkMark, WorkReason } from './work-mark.js';
export { PartitionLeases, leaseGroups, leaseKey } from './partition-leases.js';
export { leaseBucketOf, openLeaseBucket, type LeaseBucket } from './lease-bucket.js';
export type { PartitionLeaseOptions } from './partition-leases.js';
export { PartitionConsumers } from './partition-consumers.js';
export { DUE_HEADER, LATER_MIN_DELAY_MS, LaterRequeues } from './later-requeues.js';
export type { CrashBound, ParsedRequest, PartitionConsumerOptions } from './partition-consumers.js';
export { StatusIntentSchema, StatusPublisher, encodeStatusIntent } from './status-intent.js';
export type { StatusIntent } from './status-intent.js';
export type { InProcessStatusWriter, WriteGuard } from './status-handoff.js';
export { desiredStatus, sameStatus, statusInPlace } from './status-in-place.js';
export { PublishedStatus } from './published-status.js';
export type { OwnStatus } from './published-status.js';
export { ObjectReader } from './object-reader.js';
export type { FetchByReference, ReadYourWrites } from './object-reader.js';
export { OwnWrites } from './own-writes.js';
export { HandedDownWrites } from './handed-down-writes.js';
export { outcomeRecordsSince, type RecordsRead } from './outcome-records-since.js';
export type { HandedDownWrite, StaleReadOutcome } from './own-writes.js';
export { runPartitioned, pendingPerPartition } from './partitioned-controller.js';
export type { PartitionedControllerOptions, RunningPartitions } from './partitioned-controller.js';
export { readMessages, readRevisions } from './history.js';
export { PASS_IDLE_MS, readOnePass, type PassMessage, type PassStart } from './one-pass.js';
export type { Revision } from './history.js';
export {
  CRASHED_PROCESS,
  DEAD_LETTERED,
  crashedItsProcess,
  isParked,
  leaveParked,
  isOwnChange,
  publishDegraded,
} from './degraded.js';
export { agree, agreementKeys, registeredPartitions, repartitioningBy } from './agreements.js';
export type { Repartitioning } from './agreements.js';
export { BatchingReader } from './batching-reader.js';
export { IncompleteBatch, lastMessagesFor } from './last-messages.js';
export type { LastMessage } from './last-messages.js';
export { OutcomeRecorder, OutcomeRecordSchema, readOutcomes } from './outcomes.js';
export type { OutcomeRecord } from './outcomes.js';
export { watchConsumerLag } from './consumer-lag.js';
export { SWEPT, UpgradeSweeper, sweepKey } from './upgrade-sweep.js';
export { AnsweredDeliveries } from './answered-deliveries.js';
export { assess, deliveryRecordKey } from './unanswered-deliveries.js';
export { ROLE_ORIGINS, originOf, originToken, origins } from './origins.js';
export type { RoleOrigin } from './origins.js';
export {
  CLAIM_TAKEOVER_MS,
  CallInFlight,
  MAX_CALLS_PER_OBJECT,
  PerformedCalls,
  TooManyCalls,
  performedAsOf,
  performedKey,
} from './performed-calls.js';
export type { Claim, OnceOutcome, PerformedOptions, PerformedRecord } from './performed-calls.js';
