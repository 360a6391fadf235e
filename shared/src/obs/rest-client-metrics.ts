// client-go's rest client metrics, with the same names, for every service that
// calls the apiserver.
import { Counter, Histogram, type Registry } from 'prom-client';
import { perRegistry } from './per-registry.js';

export interface RestClientMetrics {
  readonly requests: Counter<'code' | 'method' | 'host'>;
  readonly latency: Histogram<'verb'>;
  /** connections opened to the apiserver (keep-alive: a handful per process) */
  readonly connections?: Counter<'host'>;
  /** Warning headers the apiserver answered with (each distinct text is logged once) */
  readonly warnings?: Counter;
}

export const restClientMetrics = perRegistry((registry: Registry): RestClientMetrics => ({
  requests: new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers: [registry],
  }),
  latency: new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb.',
    labelNames: ['verb'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [registry],
  }),
  connections: new Counter({
    name: 'kubebus_rest_client_connections_total',
    help: 'Connections opened to the apiserver (kept alive and reused)',
    labelNames: ['host'],
    registers: [registry],
  }),
  warnings: new Counter({
    name: 'kubebus_apiserver_warnings_total',
    help: 'Warning headers in apiserver responses (deprecated APIs, dropped fields); each distinct text is logged once',
    registers: [registry],
  }),
}));
