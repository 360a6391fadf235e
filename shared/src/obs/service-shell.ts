// What every kubebus service starts with: its logger, its metrics registry, and
// /healthz, /readyz and /metrics — with a readiness check registered before
// anything else, so /readyz is never vacuously true while the service starts.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { HealthChecks, startHealthServer, type HealthServer } from './health.js';
import { createLogger, type Logger, type LoggerOptions } from './logger.js';

export interface ServiceShell {
  readonly log: Logger;
  readonly registry: Registry;
  readonly checks: HealthChecks;
  readonly health: HealthServer;
  /** Marks the service started; until then /readyz says "starting". */
  started(): void;
}

export async function startServiceShell(options: {
  readonly service: string;
  readonly logLevel: string;
  readonly health: { readonly host: string; readonly port: number };
  /** where log lines go (stdout as JSON by default) */
  readonly destination?: LoggerOptions['destination'];
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
  return {
    log,
    registry,
    checks,
    health,
    started: () => {
      started = true;
    },
  };
}
