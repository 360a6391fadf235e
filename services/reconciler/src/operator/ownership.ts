// What ctx.apply will not take. All of an operator's objects apply their
// children with one field manager, so an apply replaces another owner's
// controller reference without a word (server-side apply removes what the same
// manager no longer sends): two objects that claim one name would take it from
// each other at every reconcile, and whichever wrote last grants its own
// (RoleBindings, quotas) in the other's place. And a cluster-scoped object
// someone else made (a Namespace an admin made, with what is in it) would be
// adopted and later deleted with its new owner. ctx.delete refuses the same
// objects (a name in a spec must not delete another's). controller-runtime's
// SetControllerReference refuses the first the same way (AlreadyOwnedError,
// requeued with backoff); an object being deleted is not taken either (two
// owners would swap it back and forth until it is gone).
import { ErrorCodes, KubebusError } from '@kubebus/shared/errors';
import type { KubeObject } from '@kubebus/shared/events';
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OWNER_ANNOTATION,
  ownerAnnotationOf,
} from '@kubebus/shared/kube';
import { CONTROLLER_LABEL } from './owned-objects.js';

/** How often an owner refused a name looks at it again, by default (KUBEBUS_CLAIM_RETRY): until the other lets it go. */
export const CLAIM_RETRY_MS = 30_000;

/**
 * A refusal of ctx.apply (ownershipRefusal): shown on the object (Ready=False,
 * reason AlreadyOwned) and waited out — nothing wakes the refused owner when
 * the other lets go (the child's events go to its controller), so it looks
 * again every `waitMs` (CLAIM_RETRY_MS unless set), spending none of its
 * retry budget.
 */
export class AlreadyOwnedError extends KubebusError {
  override readonly name = 'AlreadyOwnedError';

  constructor(
    message: string,
    readonly waitMs = CLAIM_RETRY_MS,
  ) {
    super(ErrorCodes.AlreadyOwned, message);
  }
}

/** The refusal among an error and its causes (a reconcile may wrap what ctx.apply threw). */
export function alreadyOwnedOf(error: unknown): AlreadyOwnedError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (e instanceof AlreadyOwnedError) return e;
    e = e.cause;
  }
  return undefined;
}

/**
 * The apiserver's refusal of a second controller reference: what ctx.apply
 * sent is another object's child, one the bus has no record of (it records
 * only what carries this operator's label).
 */
export function isSecondController(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    const { status } = e as { status?: unknown };
    if (status === 422 && e.message.includes('Only one reference can have Controller set to true'))
      return true;
    e = e.cause;
  }
  return false;
}

interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

const groupOf = (apiVersion: string | undefined) =>
  apiVersion?.includes('/') === true ? apiVersion.split('/')[0] : '';

/** What ctx.apply or ctx.delete asks of an object, for its refusal. */
export interface OwnershipAsk {
  readonly operator: string;
  /** names the object (`Namespace legacy`) */
  readonly describe: string;
  /**
   * nothing but this operator's label can say it is the owner's (cluster-scoped,
   * or beyond an owner reference's reach): one without it and without this
   * owner's controller reference someone else made
   */
  readonly labelOnly: boolean;
  readonly action: 'apply' | 'delete';
  /** how often a refused apply is looked at again (CLAIM_RETRY_MS unless set) */
  readonly retryMs?: number;
}

/**
 * Why `current` (the object as known now) may not be applied or deleted as
 * `owner`'s child; undefined when it may.
 */
export function ownershipRefusal(
  current: KubeObject | undefined,
  owner: KubeObject,
  ask: OwnershipAsk,
): string | undefined {
  if (current === undefined) return undefined;
  const { describe, operator } = ask;
  // a refused apply is looked at again; a refused delete answers absent (operator-context.ts)
  const not = ask.action === 'apply' ? 'not taken over' : 'not deleted';
  const again =
    ask.action === 'apply'
      ? ` Looked at again every ${String((ask.retryMs ?? CLAIM_RETRY_MS) / 1000)} s`
      : '';
  const references = (current.metadata['ownerReferences'] ?? []) as readonly OwnerReference[];
  const controller = references.find((ref) => ref.controller === true);
  if (controller !== undefined && controller.uid !== owner.metadata.uid) {
    // an earlier life of this very owner (deleted and made again): its children are its own
    const earlierLife =
      controller.kind === owner.kind &&
      controller.name === owner.metadata.name &&
      groupOf(controller.apiVersion) === groupOf(owner.apiVersion);
    if (!earlierLife)
      return `${describe} is already controlled by ${controller.kind ?? 'an object'} ${controller.name ?? ''} (uid ${controller.uid ?? '?'}): ${not} (two objects claim it; give one of them another name).${again}`;
  }
  const annotations = current.metadata['annotations'] as Record<string, string> | undefined;
  const appliedFor = annotations?.[OWNER_ANNOTATION];
  // applied for this very owner (or an earlier life): its own, whatever its label says
  // (the operator renamed since)
  if (appliedFor === ownerAnnotationOf(owner)) return undefined;
  if (appliedFor !== undefined)
    return `${describe} was applied for ${appliedFor}: ${not} (two objects claim it; give one of them another name).${again}`;
  const labels = current.metadata.labels ?? {};
  // both labels: the generated admission policies let the reconciler change a Namespace,
  // Role or RoleBinding only with both, so the one alone would hand over what it then may not write
  const handOver = `label it ${MANAGED_BY_LABEL}=${MANAGED_BY} ${CONTROLLER_LABEL}=${operator} to hand it over`;
  if (ask.labelOnly && controller === undefined && labels[CONTROLLER_LABEL] !== operator)
    return ask.action === 'apply'
      ? `${describe} exists and was not made by the operator ${operator}: not adopted (it would be deleted with this ${owner.kind}). Delete it, ${handOver}, or give this ${owner.kind} another name for it.${again}`
      : `${describe} was not made by the operator ${operator}: not deleted (it is not this ${owner.kind}'s; ${handOver}).${again}`;
  return undefined;
}
