// Kubernetes: references, a REST client over a KubeConfig, list and watch.
export {
  apiVersionOf,
  collectionPath,
  formatKey,
  objectKey,
  objectPath,
  resourceId,
} from './refs.js';
export type { ObjectKey, ResourceRef } from './refs.js';
export {
  NameLimits,
  ObjectKeySchema,
  groupProblem,
  isDns1123Label,
  isDns1123Subdomain,
  nameProblem,
  namespaceProblem,
  resourceProblem,
  validateObjectKey,
} from './names.js';
export type { KeyValidation } from './names.js';
export { KubeApiError, isConflict, isGone, isKubeApiError, isNotFound } from './api-error.js';
export { withoutSecretValues } from './secret-values.js';
export { ContentTypes, KubeClient } from './client.js';
export { kubeconfigFiles, loadKubeConfig } from './kubeconfig.js';
export type { KubeCredentials } from './kubeconfig.js';
export type { KubeClientOptions, RequestInit } from './client.js';
export { listPages, watchEvents } from './list-watch.js';
export type { ListPage, WatchEvent, WatchOptions, WatchScope } from './list-watch.js';
export { conditionMessage, findCondition, setCondition } from './conditions.js';
export type { Condition, ConditionInput, ConditionStatus } from './conditions.js';
export {
  MAX_NOTE_BYTES,
  apply,
  controllerReference,
  createIfAbsent,
  hasFinalizer,
  isAlreadyRecorded,
  onceEventName,
  recordEvent,
  setFinalizer,
  releaseFinalizer,
  truncateUtf8,
} from './apply.js';
export type { ApplyBody, ApplyOptions, EventInput, EventSend, OwnerReference } from './apply.js';
export { PerResourceThrottle, TokenBucket, resourceOfPath } from './rate-limiter.js';
export { AppliedObjects } from './applied-objects.js';
export {
  EventDropReasons,
  EventRecorder,
  type EventDropReason,
  type EventFence,
  type EventRecorderOptions,
  type PostEvent,
} from './event-recorder.js';
export type { WarningSink } from './warnings.js';
export { diff, formatChange, isRecord } from './object-diff.js';
export type { Change } from './object-diff.js';
export { CONDITIONS_SCHEMA, CONDITION_SCHEMA, openApiOf, structural } from './crd-schema.js';
export { MIN_KUBERNETES, requireKubernetesVersion } from './server-version.js';
export { MANAGED_BY, MANAGED_BY_LABEL, managedSelector } from './managed-by.js';
export {
  OWNER_ANNOTATION,
  ownerAnnotationOf,
  parseOwnerAnnotation,
  type AnnotatedOwner,
} from './owner-annotation.js';
