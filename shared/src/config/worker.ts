// The variables of a service that consumes partitions with a runtime
// Controller (reconciler, status writer), declared once; defaults per service.
import { z } from 'zod';
import { durationMs } from './duration.js';
import { positiveInt } from './common.js';

/**
 * KUBEBUS_STATUS_PARTITIONS' default: the status stream's partitions (reconcilers
 * publish to them, status writers consume them). Few, as the work's (DEFAULT_PARTITIONS).
 */
export const DEFAULT_STATUS_PARTITIONS = 4;

/** KUBEBUS_STATUS_PARTITIONS: every process of a controller must say the same. */
export const statusPartitionsEnv = () => positiveInt(DEFAULT_STATUS_PARTITIONS);

export interface WorkerDefaults {
  readonly maxAttempts: number;
  readonly backoffBase: string;
  readonly backoffCap: string;
  readonly replicaId: string;
}

export function workerEnv(defaults: WorkerDefaults) {
  return {
    KUBEBUS_MAX_CONCURRENT: positiveInt(8),
    KUBEBUS_MAX_ATTEMPTS: positiveInt(defaults.maxAttempts),
    /** tries for a failure the object causes (a 422 on its own write) before the DLQ */
    KUBEBUS_OBJECT_ATTEMPTS: positiveInt(3),
    KUBEBUS_BACKOFF_BASE: durationMs(defaults.backoffBase),
    KUBEBUS_BACKOFF_CAP: durationMs(defaults.backoffCap),
    KUBEBUS_ACK_WAIT: durationMs('30s'),
    // three renewals per lease TTL (15 s) at least: a replica fences itself at half of it
    KUBEBUS_LEASE_RENEW: durationMs('3s').refine((ms) => ms <= 5_000, {
      message: 'at most 5s: leases live 15 s and are renewed at least three times in that',
    }),
    KUBEBUS_REPLICA_ID: z
      .string()
      .regex(/^[-_a-zA-Z0-9]+$/, 'letters, digits, - and _')
      .default(defaults.replicaId),
  };
}

export const WorkerSchema = z.object(
  workerEnv({ maxAttempts: 1, backoffBase: '1s', backoffCap: '1s', replicaId: 'x' }),
);

/** The worker part of a service's config, from its parsed environment. */
export function workerConfig(env: z.output<typeof WorkerSchema>) {
  return {
    maxConcurrent: env.KUBEBUS_MAX_CONCURRENT,
    retry: {
      baseMs: env.KUBEBUS_BACKOFF_BASE,
      capMs: env.KUBEBUS_BACKOFF_CAP,
      maxAttempts: env.KUBEBUS_MAX_ATTEMPTS,
      objectAttempts: env.KUBEBUS_OBJECT_ATTEMPTS,
    },
    ackWaitMs: env.KUBEBUS_ACK_WAIT,
    leaseRenewMs: env.KUBEBUS_LEASE_RENEW,
    replicaId: env.KUBEBUS_REPLICA_ID,
  };
}
