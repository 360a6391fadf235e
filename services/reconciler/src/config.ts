// The reconciler's configuration: environment variables, parsed once by zod.
import { CommonEnv, commonConfig, durationMs, positiveInt } from '@kubebus/shared/config';
import { z } from 'zod';

export const ReconcilerConfigSchema = z
  .object({
    ...CommonEnv,
    KUBEBUS_CONTROLLER: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('databasecluster'),
    KUBEBUS_WORK_PARTITIONS: positiveInt(16),
    KUBEBUS_STATUS_PARTITIONS: positiveInt(16),
    KUBEBUS_MAX_CONCURRENT: positiveInt(8),
    KUBEBUS_MAX_ATTEMPTS: positiveInt(10),
    KUBEBUS_BACKOFF_BASE: durationMs('500ms'),
    KUBEBUS_BACKOFF_CAP: durationMs('5m'),
    KUBEBUS_ACK_WAIT: durationMs('30s'),
    KUBEBUS_LEASE_RENEW: durationMs('3s'),
    KUBEBUS_FIELD_MANAGER: z.string().default('kubebus-databasecluster'),
    /** the CloudEvents HTTP sink for Knative; 0 turns it off */
    KUBEBUS_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    KUBEBUS_HTTP_MAX_BYTES: positiveInt(4 * 1024 * 1024),
    /** consume the work stream (off when the reconciler runs only as a Knative sink) */
    KUBEBUS_CONSUME: z.enum(['true', 'false']).default('true'),
    KUBEBUS_REPLICA_ID: z
      .string()
      .regex(/^[-_a-zA-Z0-9]+$/, 'letters, digits, - and _')
      .default('reconciler'),
  })
  .transform((env) => ({
    ...commonConfig(env),
    controller: env.KUBEBUS_CONTROLLER,
    partitions: env.KUBEBUS_WORK_PARTITIONS,
    statusPartitions: env.KUBEBUS_STATUS_PARTITIONS,
    maxConcurrent: env.KUBEBUS_MAX_CONCURRENT,
    retry: {
      baseMs: env.KUBEBUS_BACKOFF_BASE,
      capMs: env.KUBEBUS_BACKOFF_CAP,
      maxAttempts: env.KUBEBUS_MAX_ATTEMPTS,
    },
    ackWaitMs: env.KUBEBUS_ACK_WAIT,
    leaseRenewMs: env.KUBEBUS_LEASE_RENEW,
    fieldManager: env.KUBEBUS_FIELD_MANAGER,
    http: { port: env.KUBEBUS_HTTP_PORT, maxBytes: env.KUBEBUS_HTTP_MAX_BYTES },
    consume: env.KUBEBUS_CONSUME === 'true',
    replicaId: env.KUBEBUS_REPLICA_ID,
  }));

export type ReconcilerConfig = z.output<typeof ReconcilerConfigSchema>;
