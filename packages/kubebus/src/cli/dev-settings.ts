// The shell's KUBEBUS_* settings `kubebus dev` runs the operator with, as
// `kubebus run` would read them: a retry budget, the namespaces to watch, the
// backoff, tried in dev before they are deployed. Where the servers are, the
// ports the roles listen on and how the process is laid out are dev's own:
// those are named, once each, as ignored.

/** How the operator behaves: read from the shell, as `kubebus run` reads them. */
const BEHAVIOUR = new Set([
  'KUBEBUS_QPS',
  'KUBEBUS_BURST',
  'KUBEBUS_WATCH_NAMESPACES',
  'KUBEBUS_WATCH_LABEL_SELECTOR',
  'KUBEBUS_STATUS_PARTITIONS',
  'KUBEBUS_RESYNC_PERIOD',
  'KUBEBUS_WATCH_INACTIVITY',
  'KUBEBUS_WATCH_TIMEOUT',
  'KUBEBUS_PUBLISH_MAX_IN_FLIGHT',
  'KUBEBUS_LIST_PAGE_SIZE',
  'KUBEBUS_CURSOR_FLUSH',
  'KUBEBUS_MAX_CONCURRENT',
  'KUBEBUS_MAX_ATTEMPTS',
  'KUBEBUS_OBJECT_ATTEMPTS',
  'KUBEBUS_BACKOFF_BASE',
  'KUBEBUS_BACKOFF_CAP',
  'KUBEBUS_ACK_WAIT',
  'KUBEBUS_LEASE_RENEW',
  'KUBEBUS_FIELD_MANAGER',
  'KUBEBUS_READ_YOUR_WRITES_WAIT',
  'KUBEBUS_ONCE_CLAIM_TIMEOUT',
  'KUBEBUS_CLAIM_RETRY',
  'KUBEBUS_ONCE_MAX_PER_OBJECT',
  'KUBEBUS_MAX_CRASHES',
  'KUBEBUS_OPERATOR_VERSION',
]);

/** Set by dev itself: listeners, identities, the process' layout and memory, the state account. */
const DEV_DECIDES =
  /^KUBEBUS_(HEALTH_|METRICS_|HTTP_|WEBHOOK_|STATE_NATS_|HEAP_|MAX_SEMI_SPACE_MB$|CONSUME$|REPLICA_ID$|WATCHER_ID$|CONTROLLERS?$|WORK_PARTITIONS$|STREAM_REPLICAS$)/;

export function devSettingsOf(env: Readonly<Record<string, string | undefined>>): {
  readonly settings: Record<string, string>;
  readonly ignored: string[];
} {
  const settings: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (BEHAVIOUR.has(name)) settings[name] = value;
    else if (DEV_DECIDES.test(name)) ignored.push(name);
  }
  return { settings, ignored: ignored.sort() };
}
