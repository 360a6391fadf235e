// What identifies the objects an operator owns, for pruning, and how one is
// deleted (ctx.delete and pruning alike).
import type { Resource } from '@kubebus/shared/definition';
import { isNotFound, objectPath, type KubeClient } from '@kubebus/shared/kube';
import { refOf } from './known-resources.js';

/**
 * Set on every object an operator applies or creates, to its name. Pruning
 * deletes only objects that carry it and the reconciled object's controller
 * owner reference: objects that others made and pointed at the owner stay.
 */
export const CONTROLLER_LABEL = 'kubebus.dev/controller';

/** An object's identity among the owned ones: group/plural/namespace/name. */
export function ownedKey(resource: Resource, namespace: string, name: string): string {
  return `${resource.group}/${resource.plural}/${namespace}/${name}`;
}

/**
 * DELETE with background propagation: 'deleted' when it is gone, 'terminating'
 * when it is marked and still there (finalizers pending, a grace period),
 * 'absent' when it was gone already.
 */
export async function deleteObject(
  client: KubeClient,
  resource: Resource,
  namespace: string,
  name: string,
  signal?: AbortSignal,
): Promise<'deleted' | 'terminating' | 'absent'> {
  const answer = await deleteAnswering(client, resource, namespace, name, signal);
  if (answer === 'absent') return 'absent';
  return answer.terminating ? 'terminating' : 'deleted';
}

/**
 * The same, saying which object the apiserver deleted: its uid, from the
 * object answered (deleted at once, or marked with finalizers) or the
 * Status' details (undefined when the answer carries neither), and whether
 * the apiserver kept it (keptAfterDelete).
 */
export async function deleteAnswering(
  client: KubeClient,
  resource: Resource,
  namespace: string,
  name: string,
  signal?: AbortSignal,
): Promise<{ readonly uid: string | undefined; readonly terminating: boolean } | 'absent'> {
  try {
    const answer = await client.request<DeleteAnswer | undefined>(
      objectPath(refOf(resource), namespace, name),
      {
        method: 'DELETE',
        // DeleteOptions as query parameters: over HTTP/2 a DELETE carries no body (Node ends its stream)
        query: { propagationPolicy: 'Background' },
        ...(signal === undefined ? {} : { signal }),
      },
    );
    return {
      uid: answer?.metadata?.uid ?? answer?.details?.uid,
      terminating: keptAfterDelete(answer),
    };
  } catch (error) {
    if (isNotFound(error)) return 'absent';
    throw error;
  }
}

/**
 * Whether the apiserver kept the object it answered: marked for deletion and
 * held by finalizers or a grace period. A pod deleted at once (grace 0: never
 * scheduled, or done) is answered with its deletionTimestamp too, and is gone.
 * A Namespace is held by finalizers of its own kind, in its spec (`kubernetes`:
 * until everything in it is gone), and answered Terminating.
 */
export function keptAfterDelete(answer: DeleteAnswer | undefined): boolean {
  const metadata = answer?.metadata;
  if (metadata?.deletionTimestamp === undefined) return answer?.status?.phase === 'Terminating';
  return (
    (metadata.finalizers?.length ?? 0) > 0 ||
    (metadata.deletionGracePeriodSeconds ?? 0) > 0 ||
    (answer?.spec?.finalizers?.length ?? 0) > 0 ||
    answer?.status?.phase === 'Terminating'
  );
}

/** What a DELETE answers: the object, or a Status. */
export interface DeleteAnswer {
  readonly metadata?: {
    readonly uid?: string;
    readonly deletionTimestamp?: string;
    readonly deletionGracePeriodSeconds?: number;
    readonly finalizers?: readonly string[];
  };
  readonly details?: { readonly uid?: string };
  /** a Namespace's: its own finalizers, and its phase */
  readonly spec?: { readonly finalizers?: readonly string[] };
  readonly status?: { readonly phase?: string };
}
