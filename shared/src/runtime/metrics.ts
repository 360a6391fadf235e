// controller-runtime's and client-go's workqueue metrics, with their names, so
// existing dashboards and alerts work unchanged.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { perRegistry } from '../obs/per-registry.js';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const runtimeMetrics = perRegistry((registry: Registry) => {
  const registers = [registry];
  return {
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    terminalErrors: new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: SECONDS,
      registers,
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    }),
    maxConcurrent: new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    }),
    depth: new Gauge({
      name: 'workqueue_depth',
      // controller-runtime's name; the backlog itself waits in the stream
      help: 'Work delivered to this process and not yet reconciled; what waits in the stream is kubebus_consumer_pending',
      labelNames: ['name', 'controller'],
      registers,
    }),
    adds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    }),
    queueDuration: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name', 'controller'],
      buckets: SECONDS,
      registers,
    }),
    workDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name', 'controller'],
      buckets: SECONDS,
      registers,
    }),
    retries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    }),
    deadLetters: new Counter({
      name: 'kubebus_reconcile_dead_letters_total',
      help: 'Requests parked in the DLQ after the retry budget was spent',
      labelNames: ['controller'],
      registers,
    }),
    transientRetries: new Counter({
      name: 'kubebus_reconcile_transient_retries_total',
      help: "Retries that spend no retry budget, by class: transient, a dependency (apiserver, NATS) was unavailable; forbidden, the operator's own RBAC refused a request (an admin must apply its RBAC); external, an outside system the operator's own code calls refused the connection or timed out (each also counted as an attempt, said on the object)",
      labelNames: ['controller', 'class'],
      registers,
    }),
    staleReads: new Counter({
      name: 'kubebus_reconcile_stale_reads_total',
      help: "Reads from the bus older than this process' own last write of the object (read-your-own-writes): superseded (the write was there, a later one after it), waited (until the bus had it), fell_back (read from the apiserver), unavailable (neither answered), own_status (the primary's status from before this process' own pending status intent: the reconcile saw the intent's)",
      labelNames: ['controller', 'outcome'],
      registers,
    }),
    onceCalls: new Counter({
      name: 'kubebus_once_calls_total',
      help: "ctx.once's attempts by outcome (performed-calls.ts): made, answered_done (the receiver had it), found_made (recorded before: not called), waited (another reconcile's claim in flight; retried), refused (the bucket refused the claim: not called; retried), released (perform or done threw), unrecorded (made; the bucket refused its record)",
      labelNames: ['controller', 'outcome'],
      registers,
    }),
    onceTakeovers: new Counter({
      name: 'kubebus_once_takeovers_total',
      help: 'ctx.once claims taken over: a reconcile stopped between its call and its record, so the call may be made again (unless the operator declares `done`)',
      labelNames: ['controller'],
      registers,
    }),
    superseded: new Counter({
      name: 'kubebus_workqueue_superseded_total',
      help: 'Requests replaced by a newer one for the same object before they ran (latest wins)',
      labelNames: ['controller'],
      registers,
    }),
  };
});

export type RuntimeMetrics = ReturnType<typeof runtimeMetrics>;
