// The status writer's configuration: environment variables, parsed once by zod.
import {
  CommonEnv,
  commonConfig,
  statusPartitionsEnv,
  workerConfig,
  workerEnv,
} from '@kubebus/shared/config';
import { z } from 'zod';

export const StatusWriterConfigSchema = z
  .object({
    ...CommonEnv,
    ...workerEnv({
      maxAttempts: 12,
      backoffBase: '200ms',
      backoffCap: '60s',
      replicaId: 'status-writer',
    }),
    KUBEBUS_STATUS_PARTITIONS: statusPartitionsEnv(),
    KUBEBUS_FIELD_MANAGER: z.string().default('kubebus-status-writer'),
  })
  .transform((env) => ({
    ...commonConfig(env),
    ...workerConfig(env),
    partitions: env.KUBEBUS_STATUS_PARTITIONS,
    fieldManager: env.KUBEBUS_FIELD_MANAGER,
  }));

/** What the operator definition decides: whose intents this status writer applies. */
export interface StatusWriterConfig extends z.output<typeof StatusWriterConfigSchema> {
  /** the controller (operator) whose status partitions it consumes */
  readonly controller: string;
  /** the operator's primary resource: the only one whose status it writes */
  readonly primary?: { readonly group: string; readonly resource: string };
}
