// What an operator's `map` or `references` answers, guarded: one that throws
// or answers nonsense for one object names nothing for it rather than
// stopping the watch.
import type { NamedRef } from './config.js';

export function guardedRefs(produce: () => unknown): NamedRef[] {
  try {
    const refs = produce();
    if (!Array.isArray(refs)) return [];
    return (refs as unknown[]).filter((ref): ref is NamedRef => {
      if (typeof ref !== 'object' || ref === null) return false;
      const { name, namespace } = ref as { name?: unknown; namespace?: unknown };
      return (
        typeof name === 'string' &&
        name !== '' &&
        (namespace === undefined || typeof namespace === 'string')
      );
    });
  } catch {
    return [];
  }
}
