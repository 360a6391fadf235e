// Sieve's pruning: a schedule whose perturbed view would be one the
// unperturbed operator already had cannot show anything new, so it is not
// run and the budget goes to schedules that can find something. What the
// operator saw is what the reference recorded of each reconcile: the
// primary's revision, what it read by name or listed by kind, what it wrote.
// Each rule prunes only when that record shows the view is the reference's;
// where the record cannot tell (the lagging schedule's requeue reads a bus
// the reference never had), nothing is pruned.
import type { Reference } from './reference-run.js';
import type { PrunedSchedule, ReconcileSummary } from './report.js';
import { formatSchedule, type Schedule } from './schedule.js';

type Recorded = Pick<Reference, 'steps' | 'states'>;

/** The schedules worth running, and those pruned with why. */
export function pruneSchedules(
  planned: readonly Schedule[],
  reference: Recorded,
): { readonly kept: Schedule[]; readonly pruned: PrunedSchedule[] } {
  const kept: Schedule[] = [];
  const pruned: PrunedSchedule[] = [];
  for (const schedule of planned) {
    const why = whyPruned(schedule, reference);
    if (why === undefined) kept.push(schedule);
    else pruned.push({ schedule: formatSchedule(schedule), why });
  }
  return { kept, pruned };
}

export function whyPruned(schedule: Schedule, reference: Recorded): string | undefined {
  switch (schedule.kind) {
    case 'intermediate':
      return intermediate(reference, schedule.step, schedule.k);
    case 'unobserved':
      return unobserved(reference, schedule.from, schedule.to);
    case 'stale':
      return stale(reference, schedule.step, schedule.target);
    case 'handover':
    case 'overlap':
      return unreached(reference, schedule.step, schedule.k);
    // the restarted writer and the lagging requeue see what the reference never had
    case 'status-restart':
    case 'lagging':
      return undefined;
  }
}

const reconcilesOf = (reference: Recorded, step: number): readonly ReconcileSummary[] =>
  reference.steps[step]?.reconciles ?? [];

/** The step's first reconcile that saw its change: a revision no reconcile of the step before saw. */
function firstOfChange(reference: Recorded, step: number): ReconcileSummary | undefined {
  const before = new Set(reconcilesOf(reference, step - 1).map((r) => r.saw));
  return reconcilesOf(reference, step).find((r) => !before.has(r.saw));
}

/**
 * The crash is armed on the step's first reconcile. Past its writes it is
 * never reached; after its last write, with a later reconcile of the step
 * that saw the same revision (the status not yet recorded), the redelivered
 * reconcile sees what that one saw: every write made, the same primary.
 */
function intermediate(reference: Recorded, step: number, k: number): string | undefined {
  const first = firstOfChange(reference, step);
  if (first === undefined) return undefined;
  const never = unreached(reference, step, k);
  if (never !== undefined) return never;
  const made = first.wrote.length;
  const reconciles = reconcilesOf(reference, step);
  const later = reconciles.slice(reconciles.indexOf(first) + 1);
  if (made === k && later.some((r) => r.saw === first.saw && r.call === first.call))
    return `write ${k} is the reconcile's last, and the next reconcile saw the same revision after it (${first.saw}): the redelivered one sees what it saw`;
  return undefined;
}

/** A stop after write k of the step's first reconcile, which made fewer. */
function unreached(reference: Recorded, step: number, k: number): string | undefined {
  const made = firstOfChange(reference, step)?.wrote.length;
  if (made === undefined || made >= k) return undefined;
  return `the step's first reconcile made ${made} write${made === 1 ? '' : 's'}: a stop after write ${k} is never reached`;
}

/**
 * Steps from..to-1 are hidden. When no reconcile of theirs saw a revision
 * not seen before them, and the operator's objects, Events and status stayed
 * as they were, the reference's operator saw nothing of them either (a
 * fixture's change shows the same revision of the object, and may move only
 * its status).
 */
function unobserved(reference: Recorded, from: number, to: number): string | undefined {
  if (from === 0) return undefined;
  const seen = new Set<string>();
  for (let step = 0; step < from; step++)
    for (const r of reconcilesOf(reference, step)) seen.add(r.saw);
  const start = JSON.stringify(worldOf(reference, from - 1));
  for (let step = from; step < to; step++) {
    if (reconcilesOf(reference, step).some((r) => !seen.has(r.saw))) return undefined;
    if (JSON.stringify(worldOf(reference, step)) !== start) return undefined;
  }
  return `no reconcile of step${to - from === 1 ? '' : 's'} ${from}${to - from === 1 ? '' : `-${to - 1}`} saw a new revision, and what the operator made stayed as it was: the reference saw only the end too`;
}

const worldOf = (reference: Recorded, step: number) => {
  const state = reference.states[step];
  return {
    owned: state?.owned ?? {},
    events: state?.events ?? {},
    status: state?.primary?.status ?? null,
  };
};

/**
 * A stale record the step's reconciles never read (by name, or a list of its
 * kind) nor write (a write reads the object first) changes nothing they see.
 * An object the step before wrote and this step does not is read all the
 * same, by the runtime's pruning of what an operator stops writing.
 */
function stale(reference: Recorded, step: number, target: string): string | undefined {
  const [kind = '', ...rest] = target.split('/');
  const name = rest.at(-1) ?? '';
  const named = (line: string) => line.split(' ').slice(-2).join(' ') === `${kind} ${name}`;
  const touches = (r: ReconcileSummary) =>
    r.read.some((line) => named(line) || line === `list ${kind}`) || r.wrote.some(named);
  if (reconcilesOf(reference, step).some(touches)) return undefined;
  if (reconcilesOf(reference, step - 1).some((r) => r.wrote.some(named))) return undefined;
  return `no reconcile of step ${step} read or wrote ${target}, nor listed ${kind}s: an older record of it is never seen`;
}
