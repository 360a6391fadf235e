// The bus: subjects, streams, connection and publishing on NATS JetStream.
export { EMPTY_TOKEN, decodeToken, encodeToken } from './subject-token.js';
export { SUBJECT_ROOT, keyOfSubject, partitionOf, subjects } from './subjects.js';
export { Buckets, Streams, defaultTopology, ensureTopology, streamConfigs } from './topology.js';
export type { TopologyOptions } from './topology.js';
export { connectBus } from './connect.js';
export type { BusConnection, BusConnectionOptions } from './connect.js';
export { OrderedPublisher, PublishRejectedError } from './ordered-publisher.js';
export type { OutgoingMessage, PublisherOptions, Submitted } from './ordered-publisher.js';
export { DeadLetterSchema, deadLetter } from './dead-letter.js';
export type { DeadLetter } from './dead-letter.js';
export { WorkMarkSchema, WorkReasons, encodeWorkMark } from './work-mark.js';
export type { WorkMark, WorkReason } from './work-mark.js';
