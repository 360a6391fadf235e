// What the checkpointed test operators (greetings.ts, teams.ts) share: a
// checkpoint ConfigMap records which generation the work was done for, and
// the order of the work and its checkpoint is the whole difference between a
// correct operator and the seeded bug (Sieve's intermediate-state class).
import type { ResourceObject } from 'kubebus';

export type Order = 'page-then-checkpoint' | 'checkpoint-then-page';

/** This generation's work is done, for this object (a re-created one has another uid). */
export function checkpointed(
  checkpoint:
    (ResourceObject & { readonly data?: Readonly<Record<string, string>> | undefined }) | undefined,
  owner: ResourceObject,
): boolean {
  return (
    checkpoint?.data?.['generation'] === String(owner.metadata.generation ?? 0) &&
    checkpoint.metadata.ownerReferences?.some((ref) => ref.uid === owner.metadata.uid) === true
  );
}

/** The page and its checkpoint, in the given order. */
export async function writeInOrder(
  order: Order,
  page: () => Promise<unknown>,
  checkpoint: () => Promise<unknown>,
): Promise<void> {
  const [first, second] =
    order === 'page-then-checkpoint' ? [page, checkpoint] : [checkpoint, page];
  await first();
  await second();
}
