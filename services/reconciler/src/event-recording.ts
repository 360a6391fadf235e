// The reconciler's Events, sent in the background (ADR 0029), and the count
// of those dropped, by reason: what the KubebusEventsDropped alert reads.
import {
  EventDropReasons,
  EventRecorder,
  recordEvent,
  type KubeClient,
} from '@kubebus/shared/kube';
import { perRegistry, type Logger, type Registry } from '@kubebus/shared/obs';
import { Counter } from 'prom-client';

const droppedEventsMetric = perRegistry(
  (registry: Registry) =>
    new Counter({
      name: 'kubebus_events_dropped_total',
      help: 'Kubernetes Events not recorded, by reason (refused, namespace_gone, retries_spent, in_flight_limit, fenced, stopped, failed)',
      labelNames: ['reason'],
      registers: [registry],
    }),
);

export function backgroundEvents(
  client: KubeClient,
  log: Logger,
  registry: Registry,
): EventRecorder {
  const dropped = droppedEventsMetric(registry);
  for (const reason of EventDropReasons) dropped.inc({ reason }, 0);
  return new EventRecorder(
    (regarding, input, send) => recordEvent(client, regarding, input, send),
    {
      log,
      onDropped: (reason) => {
        dropped.inc({ reason });
      },
    },
  );
}
