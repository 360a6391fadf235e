// The watcher's metrics (kubebus_*), next to client-go's rest_client_* ones.
import { restClientMetrics, type Registry } from '@kubebus/shared/obs';
import { Counter, Gauge, Histogram } from 'prom-client';

export function watcherMetrics(registry: Registry) {
  const registers = [registry];
  return {
    rest: restClientMetrics(registry),
    watchEvents: new Counter({
      name: 'kubebus_watch_events_total',
      help: 'Watch events received, by resource and type.',
      labelNames: ['resource', 'type'],
      registers,
    }),
    watchRestarts: new Counter({
      name: 'kubebus_watch_restarts_total',
      help: 'Watches re-opened after an error, a stall or the server closing them.',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    relists: new Counter({
      name: 'kubebus_watch_relists_total',
      help: 'Full lists of a resource (start without a cursor, or 410 Gone).',
      labelNames: ['resource'],
      registers,
    }),
    published: new Counter({
      name: 'kubebus_events_published_total',
      help: 'Messages stored by JetStream, by stream and whether it was a duplicate.',
      labelNames: ['stream', 'duplicate'],
      registers,
    }),
    publishDuration: new Histogram({
      name: 'kubebus_publish_duration_seconds',
      help: 'Time from publish to the JetStream ack.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    publishRetries: new Counter({
      name: 'kubebus_publish_retries_total',
      help: 'Publishes retried after a failure.',
      registers,
    }),
    byReference: new Counter({
      name: 'kubebus_events_by_reference_total',
      help: 'Events published without the object, which exceeded the NATS max payload.',
      registers,
    }),
    deadLetters: new Counter({
      name: 'kubebus_dead_letters_total',
      help: 'Changes that could not be published, parked in KUBEBUS_DLQ.',
      labelNames: ['code'],
      registers,
    }),
    resyncMarks: new Counter({
      name: 'kubebus_resync_marks_total',
      help: 'Objects marked dirty by the periodic resync.',
      labelNames: ['controller'],
      registers,
    }),
    knownObjects: new Gauge({
      name: 'kubebus_watch_known_objects',
      help: 'Objects the watcher tracks (uid and resourceVersion only).',
      labelNames: ['resource'],
      registers,
    }),
  };
}

export type WatcherMetrics = ReturnType<typeof watcherMetrics>;
