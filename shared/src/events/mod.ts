// CloudEvents for Kubernetes changes, and their NATS binding.
export {
  ChangeOps,
  EventTypes,
  KubeCloudEventSchema,
  SendReasons,
  byReference,
  eventId,
  keyOfEvent,
  kubeEvent,
  opOf,
} from './kube-event.js';
export type { ChangeOp, KubeCloudEvent, KubeEventInput, SendReason } from './kube-event.js';
export { KubeObjectSchema, OwnerReferenceSchema, controllerOf } from './kube-object.js';
export type { KubeObject, OwnerReference } from './kube-object.js';
export {
  DEFAULT_MAX_EVENT_BYTES,
  STRUCTURED_CONTENT_TYPE,
  decodeNatsMessage,
  encodeBinary,
  encodeStructured,
} from './nats-binding.js';
export type { DecodeResult, HeaderReader, NatsMessageParts } from './nats-binding.js';
