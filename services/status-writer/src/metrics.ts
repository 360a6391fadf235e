// The status writer's own metrics.
import { Counter, Histogram, type Registry } from 'prom-client';

export function statusWriterMetrics(registry: Registry) {
  const registers = [registry];
  return {
    patches: new Counter({
      name: 'kubebus_status_patches_total',
      help: 'Server-side-apply patches of /status, by result.',
      labelNames: ['result'],
      registers,
    }),
    patchDuration: new Histogram({
      name: 'kubebus_status_patch_duration_seconds',
      help: 'Latency of /status patches.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    handoffs: new Counter({
      name: 'kubebus_status_handoffs_total',
      help: 'Status intents a reconciler of the same process handed over, by path: in_process (judged and written there) or declined (sent on the bus instead).',
      labelNames: ['path'],
      registers,
    }),
    skipped: new Counter({
      name: 'kubebus_status_skipped_total',
      help: 'Intents not applied, by reason: noop, stale, gone.',
      labelNames: ['reason'],
      registers,
    }),
  };
}

export type StatusWriterMetrics = ReturnType<typeof statusWriterMetrics>;
