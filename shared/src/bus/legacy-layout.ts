// What the layout before per-operator subjects (ADR 0015) left behind, removed
// by the topology step: the shared status writer's durable consumers
// (`status-writer_p<n>`, filtering kubebus.status.p<n>.>) and the status
// intents still pending on those subjects. Nobody consumes them any more;
// each object's status is written again, on the new subjects, by the upgrade
// sweep the new version's reconcilers run when they take their partitions.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { TopologyChange } from './topology-apply.js';
import { Streams } from './topology.js';

/** The old durable names: one per status partition, shared by every operator. */
const LEGACY_STATUS_DURABLE = /^status-writer_p\d+$/;

/**
 * kubebus.status.p<n>.<4 key tokens>: seven tokens, where every new status
 * subject has eight (the controller's token), whatever the operator is called.
 */
export const LEGACY_STATUS_SUBJECTS = 'kubebus.status.*.*.*.*.*';

export async function removeLegacyLayout(jsm: JetStreamManager): Promise<TopologyChange[]> {
  const changes: TopologyChange[] = [];
  const legacy: string[] = [];
  for await (const consumer of jsm.consumers.list(Streams.status))
    if (LEGACY_STATUS_DURABLE.test(consumer.name)) legacy.push(consumer.name);
  for (const name of legacy) {
    await jsm.consumers.delete(Streams.status, name);
    changes.push({ stream: `${Streams.status}/${name}`, result: 'removed' });
  }
  const { purged } = await jsm.streams.purge(Streams.status, { filter: LEGACY_STATUS_SUBJECTS });
  if (purged > 0)
    changes.push({
      stream: Streams.status,
      result: 'removed',
      fields: [`${purged} intents on ${LEGACY_STATUS_SUBJECTS}`],
    });
  return changes;
}
