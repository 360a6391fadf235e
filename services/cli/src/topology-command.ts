// `kubebus topology apply|check`: create or update the streams and buckets (as
// the NATS admin user), or say what is missing or differs — a problem (exit 1)
// if anything is.
import {
  applyBucket,
  applyConsumers,
  performedBucketConfig,
  applyTopology,
  Buckets,
  defaultTopology,
  removeLegacyLayout,
  removeRetiredPartitions,
  type DurableConsumerSpec,
  type StorageLimits,
  type TopologyMode,
} from '@kubebus/shared/bus';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { print, type BusContext, type CommandOutcome } from './command.js';
import { formatTopology } from './topology.js';

export interface TopologyOptions {
  readonly mode: TopologyMode;
  /** stream and bucket replicas: 1 on one server, 3 or 5 in a NATS cluster */
  readonly replicas: 1 | 3 | 5;
  /** each stream's and bucket's max_bytes: those `sized` names are set, the rest kept (topology.ts) */
  readonly limits?: StorageLimits;
  readonly sized?: ReadonlySet<keyof StorageLimits>;
  /** an operator's durable consumers (`topology apply <operator>`): after the streams */
  readonly consumers?: readonly DurableConsumerSpec[];
  /** the operator those consumers are of */
  readonly controller?: string;
}

export async function topologyCommand(
  options: TopologyOptions,
  context: BusContext,
): Promise<CommandOutcome> {
  const topology = {
    ...defaultTopology,
    replicas: options.replicas,
    limits: options.limits ?? defaultTopology.limits,
    ...(options.sized === undefined ? {} : { sized: options.sized }),
  };
  const changes = await applyTopology(context.nc, topology, options.mode);
  if (options.consumers !== undefined && options.consumers.length > 0) {
    const jsm = await jetstreamManager(context.nc);
    changes.push(...(await applyConsumers(jsm, options.consumers, options.mode)));
    // the operator's records of its external calls (ctx.once, ADR 0035)
    if (options.controller !== undefined)
      changes.push(
        await applyBucket(
          context.nc,
          jsm,
          performedBucketConfig(options.controller, topology),
          options.mode,
          topology.sized,
        ),
      );
    if (options.mode === 'apply') {
      // the durables and intents of the layout before per-operator subjects (ADR 0015)
      changes.push(...(await removeLegacyLayout(jsm)));
      // the partitions a repartition to fewer left behind (retired-partitions.ts)
      if (options.controller !== undefined)
        changes.push(
          ...(await removeRetiredPartitions(
            jsm,
            await new Kvm(context.nc).open(Buckets.agreements),
            options.controller,
            options.consumers,
          )),
        );
    }
  }
  print(context, changes, () => formatTopology(changes));
  return changes.some(({ result }) => result === 'missing' || result === 'differs')
    ? 'problem'
    : 'ok';
}
