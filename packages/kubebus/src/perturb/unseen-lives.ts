// An unobserved window may hold a whole life of the object: created and
// deleted again while the operator was stopped (and gone before it came
// back). No operator can see that object, so the Events the reference posted
// for it, and the external calls it made for it (ctx.once), are not owed;
// those of every life it did see still are, once each (the once-only oracle
// stays exact for them).
import type { ObservedState } from './observed-state.js';
import type { Step } from './workload.js';

/** The [created, deleted] step pairs of lives that began and ended inside from..to. */
export function livesWithin(
  steps: readonly Step[],
  from: number,
  to: number,
): Array<readonly [number, number]> {
  const lives: Array<readonly [number, number]> = [];
  let born: number | undefined;
  for (let index = 0; index <= to && index < steps.length; index++) {
    const step = steps[index];
    if (step?.action === 'apply' && born === undefined) born = index;
    if (step?.action === 'delete' && born !== undefined) {
      if (born >= from) lives.push([born, index]);
      born = undefined;
    }
  }
  return lives;
}

/** The reference's state at `to` less the Events it posted during the unseen lives. */
export function withoutUnseenEvents(
  states: readonly ObservedState[],
  lives: ReadonlyArray<readonly [number, number]>,
  to: number,
): ObservedState | undefined {
  const end = states[to];
  if (end === undefined) return undefined;
  const owedOf = (counts: (state: ObservedState | undefined) => Counts) => {
    const owed = new Map(Object.entries(counts(end)));
    for (const [born, deleted] of lives) {
      const before = born === 0 ? {} : counts(states[born - 1]);
      for (const [name, count] of Object.entries(counts(states[deleted])))
        owed.set(name, (owed.get(name) ?? 0) - (count - (before[name] ?? 0)));
    }
    return Object.fromEntries([...owed].filter(([, count]) => count > 0));
  };
  return {
    ...end,
    events: owedOf((state) => state?.events ?? {}),
    effects: owedOf((state) => state?.effects ?? {}),
  };
}

type Counts = Readonly<Record<string, number>>;
