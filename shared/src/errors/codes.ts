// Every error kubebus raises carries one of these codes; docs/errors.md explains each.
export const ErrorCodes = {
  /** A configuration value is missing or invalid; the service does not start. */
  InvalidConfig: 'KUBEBUS_INVALID_CONFIG',
  /** A server (NATS, Kubernetes) is older than kubebus supports; the service does not start. */
  UnsupportedServer: 'KUBEBUS_UNSUPPORTED_SERVER',
  /** A message on the bus is not a valid kubebus CloudEvent or intent. */
  MalformedMessage: 'KUBEBUS_MALFORMED_MESSAGE',
  /** A message exceeds the size kubebus accepts. */
  MessageTooLarge: 'KUBEBUS_MESSAGE_TOO_LARGE',
  /** A name cannot be carried in a subject token. */
  InvalidSubjectToken: 'KUBEBUS_INVALID_SUBJECT_TOKEN',
  /** An object key breaks Kubernetes' naming rules, or its subject would be too long to publish. */
  InvalidKey: 'KUBEBUS_INVALID_KEY',
  /** The apiserver answered with an error status. */
  KubeApi: 'KUBEBUS_KUBE_API',
  /** The watch's resourceVersion is too old (410 Gone): relist. */
  WatchExpired: 'KUBEBUS_WATCH_EXPIRED',
  /** The watch stream went silent past its inactivity limit. */
  WatchStalled: 'KUBEBUS_WATCH_STALLED',
  /** Publishing to JetStream failed after its retries. */
  PublishFailed: 'KUBEBUS_PUBLISH_FAILED',
  /** A reconcile kept failing (an error of the reconciler's own, not the apiserver's). */
  ReconcileFailed: 'KUBEBUS_RECONCILE_FAILED',
  /** The process died (or hung past the ack wait) reconciling the object KUBEBUS_MAX_CRASHES times. */
  CrashLoop: 'KUBEBUS_CRASH_LOOP',
  /** A reconcile failed in a way retrying cannot fix. */
  Terminal: 'KUBEBUS_TERMINAL',
  /** ctx.apply of an object another owner controls, or of a cluster-scoped one the operator did not make: waited out. */
  AlreadyOwned: 'KUBEBUS_ALREADY_OWNED',
  /** Knative gave up delivering an event to the reconciler (its Trigger's deadLetterSink). */
  DeliveryFailed: 'KUBEBUS_DELIVERY_FAILED',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];
