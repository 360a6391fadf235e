// What an operator's `map` or `references` answers, guarded: one that throws
// or answers nonsense for one object names nothing for it rather than
// stopping the watch.
import type { NamedRef } from './config.js';

export function guardedRefs(produce: () => unknown): NamedRef[] {
  try {
    const refs = produce();
    if (!Array.isArray(refs)) return [];
    return (refs as unknown[]).flatMap((ref): NamedRef[] => {
      if (typeof ref !== 'object' || ref === null) return [];
      const { name, namespace } = ref as { name?: unknown; namespace?: unknown };
      if (typeof name !== 'string' || name === '') return [];
      // a namespace that is not a string (null, say) is the default one
      return [typeof namespace === 'string' ? { name, namespace } : { name }];
    });
  } catch {
    return [];
  }
}
