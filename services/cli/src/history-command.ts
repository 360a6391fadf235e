// `kubebus history <resource> <namespace/name>`: every recorded revision of one
// object, with what changed, the outcomes, and its dead letters.
import { readOutcomes, readRevisions } from '@kubebus/shared/bus';
import { print, type BusContext, type CommandOutcome } from './command.js';
import { formatHistory, readDeadLettersOf } from './history.js';
import { resolveObject, type ObjectRef } from './resolve-resource.js';

export async function historyCommand(ref: ObjectRef, context: BusContext): Promise<CommandOutcome> {
  const { group, resource, namespace, name } = await resolveObject(context.kube, ref);
  const key = { group, resource, namespace, name };
  const revisions = await readRevisions(context.nc, key);
  const letters = await readDeadLettersOf(context.nc, key);
  const outcomes = await readOutcomes(context.nc, key);
  print(context, { revisions, outcomes, letters }, () =>
    formatHistory(revisions, letters, outcomes),
  );
  // nothing on the bus names it: a misspelt name, or a kind no operator records
  return revisions.length + letters.length + outcomes.length === 0 ? 'problem' : 'ok';
}
