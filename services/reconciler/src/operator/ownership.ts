// What ctx.apply will not take. All of an operator's objects apply their
// children with one field manager, so an apply replaces another owner's
// controller reference without a word (server-side apply removes what the same
// manager no longer sends): two objects that claim one name would take it from
// each other at every reconcile, and whichever wrote last grants its own
// (RoleBindings, quotas) in the other's place. And a cluster-scoped object
// someone else made (a Namespace an admin made, with what is in it) would be
// adopted and later deleted with its new owner. controller-runtime's
// SetControllerReference refuses the first the same way (AlreadyOwnedError).
import type { KubeObject } from '@kubebus/shared/events';
import { CONTROLLER_LABEL } from './owned-objects.js';

interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

const groupOf = (apiVersion: string | undefined) =>
  apiVersion?.includes('/') === true ? apiVersion.split('/')[0] : '';

/**
 * Why `current` (the object as known now) may not be applied as `owner`'s
 * child; undefined when it may. `describe` names it (`Namespace legacy`).
 */
export function ownershipRefusal(
  current: KubeObject | undefined,
  owner: KubeObject,
  operator: string,
  describe: string,
  clusterScoped: boolean,
): string | undefined {
  if (current === undefined) return undefined;
  // going away: whatever applies it now meets a deletion, not a takeover
  if (current.metadata['deletionTimestamp'] !== undefined) return undefined;
  const references = (current.metadata['ownerReferences'] ?? []) as readonly OwnerReference[];
  const controller = references.find((ref) => ref.controller === true);
  if (controller !== undefined && controller.uid !== owner.metadata.uid) {
    // an earlier life of this very owner (deleted and made again): its children are its own
    const earlierLife =
      controller.kind === owner.kind &&
      controller.name === owner.metadata.name &&
      groupOf(controller.apiVersion) === groupOf(owner.apiVersion);
    if (!earlierLife)
      return `${describe} is already controlled by ${controller.kind ?? 'an object'} ${controller.name ?? ''} (uid ${controller.uid ?? '?'}): not taken over. Two objects claim it; give one of them another name. This ${owner.kind} is reconciled again when it changes`;
  }
  const labels = current.metadata.labels ?? {};
  if (clusterScoped && controller === undefined && labels[CONTROLLER_LABEL] !== operator)
    return `${describe} exists and was not made by the operator ${operator}: not adopted (it would be deleted with this ${owner.kind}). Delete it, or give this ${owner.kind} another name for it`;
  return undefined;
}
