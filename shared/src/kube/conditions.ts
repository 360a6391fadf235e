// Status conditions as Kubernetes API conventions define them (metav1.Condition):
// lastTransitionTime moves only when the status changes.
import type { Condition } from '../definition/objects.js';
import { cutChars, publicText } from '../errors/public-text.js';

// One definition of the type, in the vocabulary layer; re-exported for kube's callers.
export type { Condition, ConditionStatus } from '../definition/objects.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** metav1.Condition's bound on a message (escaped characters count as written). */
const MAX_MESSAGE_CHARS = 32_768;

/**
 * A condition's message as it is stored: `view` reads conditions, not Secrets —
 * no credentials, no control characters (public-text.ts) — within
 * metav1.Condition's bound. What "already says this" compares against.
 */
export function conditionMessage(message: string): string {
  return cutChars(publicText(message), MAX_MESSAGE_CHARS);
}

/** Returns the conditions with `input` set; other types are kept as they are. */
export function setCondition(
  current: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date = new Date(),
): Condition[] {
  const existing = current?.find((c) => c.type === input.type);
  const lastTransitionTime =
    existing !== undefined && existing.status === input.status
      ? existing.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const next: Condition = {
    ...input,
    message: conditionMessage(input.message),
    lastTransitionTime,
  };
  return [...(current ?? []).filter((c) => c.type !== input.type), next].sort((a, b) =>
    a.type.localeCompare(b.type),
  );
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string) {
  return conditions?.find((c) => c.type === type);
}
