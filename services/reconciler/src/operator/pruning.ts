// Pruning, as `kubectl apply --prune` and ApplySets do it: after a successful
// reconcile, the objects of the owned kinds that name the reconciled object
// as their controller owner and carry the operator's label (it applied them),
// but that this reconcile did not apply or create, are deleted. Never after a failed reconcile (the caller only calls
// it after success) and never in a dry run.
import type { KubeObject } from '@kubebus/shared/events';
import type { KubeClient } from '@kubebus/shared/kube';
import type { Log, Operator, Resource } from '@kubebus/shared/definition';
import { CONTROLLER_LABEL, deleteObject, ownedKey } from './owned-objects.js';
import type { ObjectLister } from './object-lister.js';

/** The owned kinds the operator prunes: `owns` less `prune.keep`; none with `prune: false`. */
export function prunedKinds(operator: Operator): Resource[] {
  const { prune = true } = operator;
  if (prune === false) return [];
  const keep = prune === true ? [] : prune.keep;
  return (operator.owns ?? []).filter(
    (kind) => !keep.some((kept) => kept.group === kind.group && kept.plural === kind.plural),
  );
}

export async function pruneOwned(options: {
  readonly kinds: readonly Resource[];
  /** the operator's name: the value of CONTROLLER_LABEL on what it applied */
  readonly controller: string;
  readonly owner: KubeObject;
  /** ownedKey of what the reconcile applied or created */
  readonly touched: ReadonlySet<string>;
  readonly lister: ObjectLister;
  readonly client: KubeClient;
  readonly log: Log;
  readonly signal: AbortSignal;
}): Promise<number> {
  const { owner } = options;
  const ownerNamespace = owner.metadata.namespace ?? '';
  let pruned = 0;
  for (const kind of options.kinds) {
    const namespaced = kind.scope === 'Namespaced';
    // a namespaced owner owns nothing cluster-scoped; a cluster-scoped one, in any namespace
    if (!namespaced && ownerNamespace !== '') continue;
    const objects = await options.lister.list(
      kind,
      namespaced && ownerNamespace !== '' ? ownerNamespace : undefined,
    );
    for (const object of objects) {
      const controlled = (object.metadata.ownerReferences ?? []).some(
        (ref) => ref.controller === true && ref.uid === owner.metadata.uid,
      );
      const namespace = object.metadata.namespace ?? '';
      const ours = object.metadata.labels?.[CONTROLLER_LABEL] === options.controller;
      if (
        !controlled ||
        !ours ||
        options.touched.has(ownedKey(kind, namespace, object.metadata.name))
      )
        continue;
      options.signal.throwIfAborted();
      const outcome = await deleteObject(
        options.client,
        kind,
        namespace,
        object.metadata.name,
        options.signal,
      );
      if (outcome === 'deleted') {
        pruned += 1;
        options.log.info(
          { kind: kind.kind, name: object.metadata.name, namespace },
          'pruned: owned object the reconcile no longer applies',
        );
      }
    }
  }
  return pruned;
}
