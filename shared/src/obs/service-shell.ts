// What every kubebus service starts with: its logger, its metrics registry, and
// /healthz, /readyz and /metrics — with a readiness check registered before
// anything else, so /readyz is never vacuously true while the service starts.
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { HealthChecks, startHealthServer, type HealthServer } from './health.js';
import { createLogger, type Logger, type LoggerOptions } from './logger.js';
import { OtlpExporter } from './otlp.js';
import { spans, type Spans } from './spans.js';

/** Where spans go (OTEL_EXPORTER_OTLP_*); none: traceparents are carried, nothing exported. */
export interface TracingConfig {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName?: string;
}

export interface ServiceShell {
  readonly log: Logger;
  readonly registry: Registry;
  readonly checks: HealthChecks;
  readonly health: HealthServer;
  /** the service's spans (exported over OTLP when tracing is configured) */
  readonly spans: Spans;
  /** Marks the service started; until then /readyz says "starting". */
  started(): void;
  /** Sends the spans still queued (at shutdown). */
  flushSpans(): Promise<void>;
}

export async function startServiceShell(options: {
  readonly service: string;
  readonly logLevel: string;
  readonly health: { readonly host: string; readonly port: number };
  /** where log lines go (stdout as JSON by default) */
  readonly destination?: LoggerOptions['destination'];
  readonly tracing?: TracingConfig | undefined;
  /** service.version of exported spans */
  readonly version?: string;
}): Promise<ServiceShell> {
  const log = createLogger({
    service: options.service,
    level: options.logLevel,
    ...(options.destination === undefined ? {} : { destination: options.destination }),
  });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const checks = new HealthChecks();
  let started = false;
  checks.ready('started', () => started || 'starting');
  const health = await startHealthServer({ ...options.health, checks, registry });
  log.info({ port: health.port }, 'serving /healthz, /readyz and /metrics');
  const { tracing } = options;
  const exporter =
    tracing === undefined
      ? undefined
      : new OtlpExporter({
          url: tracing.url,
          headers: tracing.headers,
          serviceName: tracing.serviceName ?? `kubebus-${options.service}`,
          serviceVersion: options.version ?? '0.0.0',
          dropped: new Counter({
            name: 'kubebus_spans_dropped_total',
            help: 'Spans not delivered to the OTLP collector (unreachable, refused, or queue full).',
            registers: [registry],
          }),
        });
  if (tracing !== undefined) log.info({ url: tracing.url }, 'exporting spans over OTLP');
  return {
    log,
    registry,
    checks,
    health,
    spans: spans(
      exporter === undefined
        ? undefined
        : (span) => {
            exporter.export(span);
          },
    ),
    started: () => {
      started = true;
    },
    flushSpans: async () => {
      await exporter?.stop();
    },
  };
}
