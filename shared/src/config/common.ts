// The variables every kubebus service reads, declared once.
import { z } from 'zod';
import { isLoopbackHost } from '../obs/listen.js';
import { parseOtlpHeaders } from '../obs/otlp.js';
import type { TracingConfig } from '../obs/service-shell.js';

export const CommonEnv = {
  KUBEBUS_NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\//, 'expected nats://host:port, or tls://host:port for TLS'),
  KUBEBUS_NATS_USER: z.string().optional(),
  KUBEBUS_NATS_PASSWORD: z.string().optional(),
  /** read again at every (re)connect: a mounted Secret changes in place */
  KUBEBUS_NATS_PASSWORD_FILE: z.string().optional(),
  /** the CA of the NATS servers' certificates: set, the client refuses plaintext */
  KUBEBUS_NATS_CA: z.string().min(1).optional(),
  /** a client certificate and its key, for servers that verify clients (mTLS) */
  KUBEBUS_NATS_CERT: z.string().min(1).optional(),
  KUBEBUS_NATS_KEY: z.string().min(1).optional(),
  KUBECONFIG: z.string().optional(),
  KUBEBUS_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  KUBEBUS_HEALTH_HOST: z.string().default('0.0.0.0'),
  /**
   * /metrics: `kubernetes` — HTTPS on KUBEBUS_METRICS_PORT, a bearer token checked
   * by TokenReview and SubjectAccessReview (controller-runtime's secure metrics);
   * `none` — plain on the health port, only when that is on loopback. Default:
   * none on a loopback KUBEBUS_HEALTH_HOST, kubernetes otherwise.
   */
  KUBEBUS_METRICS_AUTH: z.enum(['kubernetes', 'none']).optional(),
  KUBEBUS_METRICS_HOST: z.string().min(1).optional(),
  KUBEBUS_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(8443),
  /** a mounted serving certificate and key (cert-manager); unset: self-signed at start */
  KUBEBUS_METRICS_CERT: z.string().min(1).optional(),
  KUBEBUS_METRICS_KEY: z.string().min(1).optional(),
  KUBEBUS_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
  /** replicas of kubebus' streams and buckets: 1 on one server, 3 in a NATS cluster */
  KUBEBUS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** client-side rate limit towards the apiserver (client-go's QPS and burst) */
  KUBEBUS_QPS: z.coerce.number().positive().default(20),
  KUBEBUS_BURST: z.coerce.number().int().positive().default(40),
  /** OpenTelemetry's own variables: spans go to this collector over OTLP/HTTP */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/json', 'http/protobuf'], {
      message:
        "kubebus sends spans over OTLP/HTTP in JSON: point it at the collector's HTTP port (4318), with http/json or unset",
    })
    .optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
};

export const CommonSchema = z.object(CommonEnv);
type CommonInput = z.output<typeof CommonSchema>;

/** The common part of a service's config, from its parsed environment. */
export function commonConfig(env: CommonInput) {
  return {
    nats: {
      servers: env.KUBEBUS_NATS_URL,
      ...(env.KUBEBUS_NATS_USER === undefined ? {} : { user: env.KUBEBUS_NATS_USER }),
      ...(env.KUBEBUS_NATS_PASSWORD === undefined ? {} : { pass: env.KUBEBUS_NATS_PASSWORD }),
      ...(env.KUBEBUS_NATS_PASSWORD_FILE === undefined
        ? {}
        : { passFile: env.KUBEBUS_NATS_PASSWORD_FILE }),
      tls: {
        ...(env.KUBEBUS_NATS_CA === undefined ? {} : { caFile: env.KUBEBUS_NATS_CA }),
        ...(env.KUBEBUS_NATS_CERT === undefined ? {} : { certFile: env.KUBEBUS_NATS_CERT }),
        ...(env.KUBEBUS_NATS_KEY === undefined ? {} : { keyFile: env.KUBEBUS_NATS_KEY }),
      },
    },
    kubeRate: { qps: env.KUBEBUS_QPS, burst: env.KUBEBUS_BURST },
    streamReplicas: env.KUBEBUS_STREAM_REPLICAS,
    kubeconfig: env.KUBECONFIG,
    health: { host: env.KUBEBUS_HEALTH_HOST, port: env.KUBEBUS_HEALTH_PORT },
    metrics: metricsOf(env),
    logLevel: env.KUBEBUS_LOG_LEVEL,
    tracing: tracingOf(env),
  };
}

/** How /metrics is served (the shell refuses `none` off loopback). */
function metricsOf(env: CommonInput) {
  const cert = env.KUBEBUS_METRICS_CERT;
  const key = env.KUBEBUS_METRICS_KEY;
  return {
    auth:
      env.KUBEBUS_METRICS_AUTH ??
      (isLoopbackHost(env.KUBEBUS_HEALTH_HOST) ? ('none' as const) : ('kubernetes' as const)),
    host: env.KUBEBUS_METRICS_HOST ?? env.KUBEBUS_HEALTH_HOST,
    port: env.KUBEBUS_METRICS_PORT,
    ...(cert === undefined || key === undefined ? {} : { tls: { certFile: cert, keyFile: key } }),
  };
}

/** The OTLP endpoint for spans, from OpenTelemetry's variables; undefined exports nothing. */
function tracingOf(env: CommonInput): TracingConfig | undefined {
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  if (url === undefined) return undefined;
  return {
    url,
    headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...(env.OTEL_SERVICE_NAME === undefined ? {} : { serviceName: env.OTEL_SERVICE_NAME }),
  };
}

export const positiveInt = (fallback: number) =>
  z.coerce.number().int().positive().default(fallback);
