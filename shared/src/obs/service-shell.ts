// What every kubebus service starts with: its logger, its metrics registry, and
// /healthz, /readyz and /metrics — with a readiness check registered before
// anything else, so /readyz is never vacuously true while the service starts.
// /metrics is served either on the health port, unauthenticated, only on
// loopback (`local`: kubebus dev, the test kit), or on its own HTTPS port
// behind a TokenReview and a SubjectAccessReview (`secure`, metrics-server.ts).
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import { HealthChecks, startHealthServer, type HealthServer } from './health.js';
import { isLoopbackHost } from './listen.js';
import { createLogger, type Logger, type LoggerOptions } from './logger.js';
import type { MetricsAccess } from './metrics-access.js';
import { startSecureMetricsServer, type CertificateFiles } from './metrics-server.js';
import { OtlpExporter } from './otlp.js';
import { spans, type Spans } from './spans.js';

/** Where spans go (OTEL_EXPORTER_OTLP_*); none: traceparents are carried, nothing exported. */
export interface TracingConfig {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName?: string;
}

/** Where /metrics is served. */
export type MetricsServing =
  | { readonly mode: 'local' }
  | {
      readonly mode: 'secure';
      readonly host: string;
      readonly port: number;
      /** a mounted certificate; absent: self-signed at start */
      readonly tls?: CertificateFiles | undefined;
      /** who may read, made once the registry and the logger exist */
      readonly access: (registry: Registry, log: Logger) => MetricsAccess;
    };

export interface ServiceShell {
  readonly log: Logger;
  readonly registry: Registry;
  readonly checks: HealthChecks;
  /** the health server; closing it closes the metrics server too */
  readonly health: HealthServer;
  /** the HTTPS port of /metrics in the secure mode */
  readonly metricsPort?: number;
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
  /** default: local (on the health port, which must then be on loopback) */
  readonly metrics?: MetricsServing;
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
  const metrics = options.metrics ?? { mode: 'local' };
  if (metrics.mode === 'local' && !isLoopbackHost(options.health.host))
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      `/metrics without authentication would be open to anyone on ${options.health.host}: set KUBEBUS_METRICS_AUTH=kubernetes (HTTPS, TokenReview and SubjectAccessReview), or bind to loopback (KUBEBUS_HEALTH_HOST=127.0.0.1)`,
    );
  const probes = await startHealthServer({
    ...options.health,
    checks,
    registry,
    metrics: metrics.mode === 'local',
    log,
  });
  let health: HealthServer = probes;
  let metricsPort: number | undefined;
  if (metrics.mode === 'secure') {
    const served = await startSecureMetricsServer({
      host: metrics.host,
      port: metrics.port,
      registry,
      access: metrics.access(registry, log),
      tls: metrics.tls,
      log,
    }).catch(async (error: unknown) => {
      await probes.close();
      throw error;
    });
    metricsPort = served.port;
    health = {
      port: probes.port,
      close: async () => {
        await Promise.all([probes.close(), served.close()]);
      },
    };
    log.info(
      { port: probes.port, metricsPort, certificate: metrics.tls?.certFile ?? 'self-signed' },
      'serving /healthz and /readyz, and /metrics over HTTPS to authorized readers',
    );
  } else log.info({ port: probes.port }, 'serving /healthz, /readyz and /metrics (loopback)');
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
    ...(metricsPort === undefined ? {} : { metricsPort }),
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
