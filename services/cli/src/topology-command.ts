// `kubebus topology apply|check`: create or update the streams and buckets (as
// the NATS admin user), or say what is missing or differs — a problem (exit 1)
// if anything is.
import { applyTopology, defaultTopology, type TopologyMode } from '@kubebus/shared/bus';
import { print, type BusContext, type CommandOutcome } from './command.js';
import { formatTopology } from './topology.js';

export interface TopologyOptions {
  readonly mode: TopologyMode;
  /** stream and bucket replicas: 1 on one server, 3 or 5 in a NATS cluster */
  readonly replicas: 1 | 3 | 5;
}

export async function topologyCommand(
  options: TopologyOptions,
  context: BusContext,
): Promise<CommandOutcome> {
  const changes = await applyTopology(
    context.nc,
    { ...defaultTopology, replicas: options.replicas },
    options.mode,
  );
  print(context, changes, () => formatTopology(changes));
  return changes.some(({ result }) => result === 'missing' || result === 'differs')
    ? 'problem'
    : 'ok';
}
