// Consumer lag as metrics, per partition this replica holds: messages not yet
// delivered and delivered but not acknowledged — what `kubebus lag` shows,
// for Prometheus and its alerts. Read from the server every few seconds.
import type { JetStreamManager } from '@nats-io/jetstream';
import { Gauge, type Registry } from 'prom-client';
import { perRegistry } from '../obs/per-registry.js';

const lagMetrics = perRegistry((registry: Registry) => ({
  pending: new Gauge({
    name: 'kubebus_consumer_pending',
    help: 'Messages of a partition consumer not yet delivered (from the server)',
    labelNames: ['stream', 'consumer'],
    registers: [registry],
  }),
  ackPending: new Gauge({
    name: 'kubebus_consumer_ack_pending',
    help: 'Messages of a partition consumer delivered and not yet acknowledged (from the server)',
    labelNames: ['stream', 'consumer'],
    registers: [registry],
  }),
}));

export function watchConsumerLag(options: {
  readonly jsm: JetStreamManager;
  readonly registry: Registry;
  readonly stream: string;
  /** the durable consumer names of the partitions held now */
  readonly consumers: () => readonly string[];
  readonly everyMs: number;
}): { stop(): void } {
  const metrics = lagMetrics(options.registry);
  let shown = new Set<string>();
  let running = false;
  const refresh = async () => {
    if (running) return;
    running = true;
    try {
      const now = new Set(options.consumers());
      for (const consumer of shown)
        if (!now.has(consumer)) {
          metrics.pending.remove({ stream: options.stream, consumer });
          metrics.ackPending.remove({ stream: options.stream, consumer });
        }
      for (const consumer of now) {
        const info = await options.jsm.consumers.info(options.stream, consumer).catch(() => null);
        if (info === null) continue;
        const labels = { stream: options.stream, consumer };
        metrics.pending.set(labels, info.num_pending);
        metrics.ackPending.set(labels, info.num_ack_pending);
      }
      shown = now;
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void refresh(), options.everyMs);
  timer.unref();
  void refresh();
  return {
    stop: () => {
      clearInterval(timer);
    },
  };
}
