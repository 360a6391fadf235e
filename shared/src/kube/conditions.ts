// Status conditions as Kubernetes API conventions define them (metav1.Condition):
// lastTransitionTime moves only when the status changes.
import type { Condition } from '../definition/objects.js';

// One definition of the type, in the vocabulary layer; re-exported for kube's callers.
export type { Condition, ConditionStatus } from '../definition/objects.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

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
  const next: Condition = { ...input, lastTransitionTime };
  return [...(current ?? []).filter((c) => c.type !== input.type), next].sort((a, b) =>
    a.type.localeCompare(b.type),
  );
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string) {
  return conditions?.find((c) => c.type === type);
}
