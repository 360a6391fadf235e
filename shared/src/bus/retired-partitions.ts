// What a repartition to fewer partitions leaves behind (agreements.ts): the
// operator's durable consumers of the partitions past the new count, and the
// marks or intents still pending on them. No one consumes them any more —
// the upgrade sweep marked every object again in its new partition — but
// they would show as lag for ever (`kubebus lag`, the lag alert). The
// topology step removes them, and only once the operator's processes have
// registered the count it declares: before that, processes with the old
// count may still be consuming them.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { agreementKeys, registeredPartitions } from './agreements.js';
import { durableNames, type DurableConsumerSpec } from './durable-consumers.js';
import { subjects } from './subjects.js';
import type { TopologyChange } from './topology-apply.js';
import { Streams } from './topology.js';

const KINDS = [
  {
    stream: Streams.work,
    key: agreementKeys.work,
    durable: durableNames.work,
    filter: subjects.workOfPartition,
  },
  {
    stream: Streams.status,
    key: agreementKeys.status,
    durable: durableNames.status,
    filter: subjects.statusOfPartition,
  },
] as const;

/** `declared`: the operator's consumers as the topology step creates them (their counts). */
export async function removeRetiredPartitions(
  jsm: JetStreamManager,
  agreements: KV,
  controller: string,
  declared: readonly DurableConsumerSpec[],
): Promise<TopologyChange[]> {
  const changes: TopologyChange[] = [];
  for (const kind of KINDS) {
    // the partitions' consumers: the operator's one consumer of waiting requeues is none
    const count = declared.filter(
      (spec) => spec.stream === kind.stream && spec.durable !== durableNames.later(controller),
    ).length;
    if (count === 0 || (await registeredPartitions(agreements, kind.key(controller))) !== count)
      continue;
    const retired: number[] = [];
    for await (const consumer of jsm.consumers.list(kind.stream)) {
      // the operator's names are exactly `<controller>_p<n>` / `<controller>_status_p<n>`
      const n = Number(/\d+$/.exec(consumer.name)?.[0] ?? Number.NaN);
      if (n >= count && consumer.name === kind.durable(controller, n)) retired.push(n);
    }
    for (const partition of retired.sort((a, b) => a - b)) {
      const name = kind.durable(controller, partition);
      await jsm.consumers.delete(kind.stream, name);
      const { purged } = await jsm.streams.purge(kind.stream, {
        filter: kind.filter(controller, partition),
      });
      changes.push({
        stream: `${kind.stream}/${name}`,
        result: 'removed',
        fields: [`partition ${partition} of ${count} no longer exists; ${purged} pending removed`],
      });
    }
  }
  return changes;
}
