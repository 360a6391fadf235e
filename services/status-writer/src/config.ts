// The status writer's configuration: environment variables, parsed once by zod.
import { CommonEnv, commonConfig, durationMs, positiveInt } from '@kubebus/shared/config';
import { z } from 'zod';

const positive = (fallback: number) => z.coerce.number().positive().default(fallback);

export const StatusWriterConfigSchema = z
  .object({
    ...CommonEnv,
    KUBEBUS_STATUS_PARTITIONS: positiveInt(16),
    KUBEBUS_FIELD_MANAGER: z.string().default('kubebus-status-writer'),
    KUBEBUS_QPS: positive(20),
    KUBEBUS_BURST: positiveInt(40),
    KUBEBUS_MAX_CONCURRENT: positiveInt(8),
    KUBEBUS_MAX_ATTEMPTS: positiveInt(12),
    KUBEBUS_BACKOFF_BASE: durationMs('200ms'),
    KUBEBUS_BACKOFF_CAP: durationMs('60s'),
    KUBEBUS_ACK_WAIT: durationMs('30s'),
    KUBEBUS_LEASE_RENEW: durationMs('3s'),
    KUBEBUS_REPLICA_ID: z
      .string()
      .regex(/^[-_a-zA-Z0-9]+$/, 'letters, digits, - and _')
      .default('status-writer'),
  })
  .transform((env) => ({
    ...commonConfig(env),
    partitions: env.KUBEBUS_STATUS_PARTITIONS,
    fieldManager: env.KUBEBUS_FIELD_MANAGER,
    qps: env.KUBEBUS_QPS,
    burst: env.KUBEBUS_BURST,
    maxConcurrent: env.KUBEBUS_MAX_CONCURRENT,
    retry: {
      baseMs: env.KUBEBUS_BACKOFF_BASE,
      capMs: env.KUBEBUS_BACKOFF_CAP,
      maxAttempts: env.KUBEBUS_MAX_ATTEMPTS,
    },
    ackWaitMs: env.KUBEBUS_ACK_WAIT,
    leaseRenewMs: env.KUBEBUS_LEASE_RENEW,
    replicaId: env.KUBEBUS_REPLICA_ID,
  }));

export type StatusWriterConfig = z.output<typeof StatusWriterConfigSchema>;
