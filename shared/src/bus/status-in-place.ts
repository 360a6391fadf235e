// Whether a status is already in place: the status writer's no-op rule, shared
// with the publisher of intents, so a reconciler does not ask for a write the
// writer would find nothing to do for.
import { isDeepStrictEqual } from 'node:util';

interface ConditionLike {
  type?: unknown;
  status?: unknown;
  lastTransitionTime?: unknown;
}

/**
 * Keeps the lastTransitionTime the object already shows for a condition whose
 * status did not change: reconcilers that raced the previous write may have
 * stamped a new time, and the API conventions say it moves only on a change.
 */
function keepTransitionTimes(desired: unknown, current: unknown): unknown {
  if (!Array.isArray(desired) || !Array.isArray(current)) return desired;
  return (desired as ConditionLike[]).map((condition) => {
    const before = (current as ConditionLike[]).find((c) => c.type === condition.type);
    return before !== undefined &&
      before.status === condition.status &&
      before.lastTransitionTime !== undefined
      ? { ...condition, lastTransitionTime: before.lastTransitionTime }
      : condition;
  });
}

/** The status an intent asks for, written over `current`: its fields, observedGeneration, kept transition times. */
export function desiredStatus(
  intent: { readonly status: Record<string, unknown>; readonly observedGeneration: number },
  current: Record<string, unknown>,
): Record<string, unknown> {
  const desired: Record<string, unknown> = {
    ...intent.status,
    observedGeneration: intent.observedGeneration,
  };
  if ('conditions' in desired)
    desired['conditions'] = keepTransitionTimes(desired['conditions'], current['conditions']);
  return desired;
}

/** Every field the desired status names already has that value in `current`. */
export function statusInPlace(
  desired: Record<string, unknown>,
  current: Record<string, unknown>,
): boolean {
  return Object.entries(desired).every(([field, value]) =>
    isDeepStrictEqual(current[field], value),
  );
}

/** Two intents' statuses say the same, transition times of unchanged conditions aside. */
export function sameStatus(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const withTimesOfB = desiredStatus({ status: a, observedGeneration: 0 }, b);
  const bWithGeneration = { ...b, observedGeneration: 0 };
  return (
    Object.keys(withTimesOfB).length === Object.keys(bWithGeneration).length &&
    statusInPlace(withTimesOfB, bWithGeneration)
  );
}
