// `kubebus status <resource> <namespace/name>`: why an object is (not) Ready;
// a problem (exit 1) when it is neither on the apiserver nor on the bus.
import { print, type BusContext, type CommandOutcome } from './command.js';
import { resolveObject, type ObjectRef } from './resolve-resource.js';
import { formatStatus, readStatus } from './status.js';

export async function statusCommand(ref: ObjectRef, context: BusContext): Promise<CommandOutcome> {
  const status = await readStatus(context.nc, context.kube, await resolveObject(context.kube, ref));
  print(context, status, () => formatStatus(status));
  return status.found === 'nowhere' ? 'problem' : 'ok';
}
