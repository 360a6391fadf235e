// The reconciler's configuration: environment variables, parsed once by zod.
import {
  CommonEnv,
  commonConfig,
  positiveInt,
  workerConfig,
  workerEnv,
} from '@kubebus/shared/config';
import { z } from 'zod';

export const ReconcilerConfigSchema = z
  .object({
    ...CommonEnv,
    ...workerEnv({
      maxAttempts: 10,
      backoffBase: '500ms',
      backoffCap: '5m',
      replicaId: 'reconciler',
    }),
    KUBEBUS_CONTROLLER: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('databasecluster'),
    KUBEBUS_WORK_PARTITIONS: positiveInt(16),
    KUBEBUS_STATUS_PARTITIONS: positiveInt(16),
    KUBEBUS_FIELD_MANAGER: z.string().default('kubebus-databasecluster'),
    /** the CloudEvents HTTP sink for Knative; 0 turns it off */
    KUBEBUS_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    KUBEBUS_HTTP_MAX_BYTES: positiveInt(4 * 1024 * 1024),
    /** consume the work stream (off when the reconciler runs only as a Knative sink) */
    KUBEBUS_CONSUME: z.enum(['true', 'false']).default('true'),
  })
  .transform((env) => ({
    ...commonConfig(env),
    ...workerConfig(env),
    controller: env.KUBEBUS_CONTROLLER,
    partitions: env.KUBEBUS_WORK_PARTITIONS,
    statusPartitions: env.KUBEBUS_STATUS_PARTITIONS,
    fieldManager: env.KUBEBUS_FIELD_MANAGER,
    http: { port: env.KUBEBUS_HTTP_PORT, maxBytes: env.KUBEBUS_HTTP_MAX_BYTES },
    consume: env.KUBEBUS_CONSUME === 'true',
  }));

export type ReconcilerConfig = z.output<typeof ReconcilerConfigSchema>;
