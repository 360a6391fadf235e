// The durable consumers an operator's roles pull from, as the topology step
// creates them (`kubebus topology apply <operator>`): derived from the same
// definition and environment as the roles' own configurations, so the
// consumers the admin creates are the ones the roles look for.
import {
  operatorConsumers,
  pendingPerPartition,
  type DurableConsumerSpec,
} from '@kubebus/shared/bus';
import type { Environment } from '@kubebus/shared/config';
import type { Operator } from '@kubebus/shared/definition';
import { reconcilerConfig, statusWriterConfig } from './role-configs.js';

export function consumersOf(operator: Operator, env: Environment): DurableConsumerSpec[] {
  // The roles' schemas require a NATS URL; the topology step may have found
  // its server from flags or a nats context instead. It is not used here.
  const roleEnv = { KUBEBUS_NATS_URL: 'nats://127.0.0.1:4222', ...env };
  const reconciler = reconcilerConfig(operator, roleEnv, 'topology');
  const writer = statusWriterConfig(operator, roleEnv, 'topology');
  return operatorConsumers(operator.name, {
    work: {
      partitions: reconciler.partitions,
      ackWaitMs: reconciler.ackWaitMs,
      maxAckPending: pendingPerPartition(reconciler.maxConcurrent, reconciler.partitions),
    },
    status: {
      partitions: writer.partitions,
      ackWaitMs: writer.ackWaitMs,
      maxAckPending: pendingPerPartition(writer.maxConcurrent, writer.partitions),
    },
  });
}
