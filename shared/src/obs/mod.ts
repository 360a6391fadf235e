// Observability: logs, trace context, health endpoints, standard metrics.
export { createLogger, REDACTED_PATHS } from './logger.js';
export type { Logger, LoggerOptions } from './logger.js';
export { continueTrace, formatTraceparent, parseTraceparent, startTrace } from './trace.js';
export type { TraceContext } from './trace.js';
export { HealthChecks, startHealthServer } from './health.js';
export type { Check, HealthServer } from './health.js';
export { restClientMetrics } from './rest-client-metrics.js';
export type { RestClientMetrics } from './rest-client-metrics.js';
export { Registry } from 'prom-client';
export { startServiceShell } from './service-shell.js';
export { listen } from './listen.js';
export type { Listening } from './listen.js';
export type { ServiceShell, TracingConfig } from './service-shell.js';
export { SpanKinds, spans } from './spans.js';
export type { EndedSpan, Span, SpanAttributes, SpanKind, Spans } from './spans.js';
export { OtlpExporter, parseOtlpHeaders } from './otlp.js';
export { gracefulShutdown } from './shutdown.js';
export { perRegistry } from './per-registry.js';
