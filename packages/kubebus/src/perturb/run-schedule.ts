// One schedule on the bed, in a place of its own (place.ts): the workload up to the
// perturbed step unperturbed, the perturbation, then the oracles against the
// reference's state at that step.
import type { BedDriver } from './bed-driver.js';
import { hold, reach, type Timing, type Watch } from './convergence.js';
import type { ObservedState } from './observed-state.js';
import type { Place } from './place.js';
import type { RecordingOperator } from './recording-operator.js';
import { summaryOf, type Reference } from './reference-run.js';
import type { OracleName, ScheduleResult } from './report.js';
import { formatSchedule, type Schedule } from './schedule.js';
import { livesWithin, withoutUnseenEvents } from './unseen-lives.js';
import type { Workload } from './workload.js';

/** How long the armed reconcile may take to come (its work is redelivered quickly). */
const CRASH_WITHIN_MS = 30_000;

interface Run {
  readonly driver: BedDriver;
  readonly recording: RecordingOperator;
  readonly workload: Workload;
  readonly reference: Reference;
  readonly timing: Timing;
  readonly place: Place;
}

function watchOf(run: Run): Watch {
  return {
    driver: run.driver,
    place: run.place,
    timing: run.timing,
    activity: () => run.recording.activity(run.place.key),
  };
}

type Verdict = Omit<ScheduleResult, 'schedule' | 'seconds'>;

export async function runSchedule(run: Run, schedule: Schedule): Promise<ScheduleResult> {
  const started = performance.now();
  await run.driver.prepare(run.place);
  const verdict = await perturbed(run, schedule);
  run.recording.disarm();
  return {
    schedule: formatSchedule(schedule),
    seconds: Math.round(performance.now() - started) / 1000,
    ...verdict,
  };
}

function perturbed(run: Run, schedule: Schedule): Promise<Verdict> {
  switch (schedule.kind) {
    case 'intermediate':
      return intermediate(run, schedule.step, schedule.k);
    case 'unobserved':
      return unobserved(run, schedule.from, schedule.to);
    case 'stale':
      return stale(run, schedule.step, schedule.target);
    case 'lagging':
      return lagging(run, schedule.step, schedule.primary);
  }
}

/** Steps `from`..`until` - 1, unperturbed, each reaching the reference's state. */
async function prefix(run: Run, until: number, from = 0): Promise<Verdict | undefined> {
  for (let index = from; index < until; index++) {
    const step = run.workload.steps[index];
    const expected = run.reference.states[index];
    if (step === undefined || expected === undefined) break;
    run.recording.step = index;
    await run.driver.apply(run.place, step);
    const reached = await reach(watchOf(run), expected);
    if (!reached.ok)
      return {
        outcome: 'failed',
        oracle: oracleOf(expected, reached.state, reached.differences),
        detail: [
          `before the perturbation, at step ${index} (${step.why}):`,
          ...reached.differences,
        ],
        reconciles: run.recording.recordsOf(run.place.key, index).map(summaryOf),
      };
  }
  return undefined;
}

async function intermediate(run: Run, index: number, k: number): Promise<Verdict> {
  const step = run.workload.steps[index];
  if (step === undefined) return notApplicable(`the workload has no step ${index}`);
  const failed = await prefix(run, index);
  if (failed !== undefined) return failed;
  // armed before the apply: the step's reconcile may start before apply returns
  run.recording.step = index;
  const armed = run.recording.arm({
    key: run.place.key,
    step: index,
    k,
    matches: await run.driver.seenAfter(run.place, step),
  });
  await run.driver.apply(run.place, step);
  const came = (await within(armed, CRASH_WITHIN_MS)) ?? 'unreached';
  if (came === 'unreached') {
    run.recording.disarm();
    return {
      outcome: 'unreached',
      note: `the step's first reconcile made fewer than ${k} writes this time`,
      reconciles: run.recording.recordsOf(run.place.key, index).map(summaryOf),
    };
  }
  await run.driver.crash();
  const reference = run.reference.steps[index];
  const bound = 2 * (reference?.writes ?? 0) + Math.max(k, reference?.maxWritesPerReconcile ?? 0);
  return judge(run, index, bound);
}

async function unobserved(run: Run, from: number, to: number): Promise<Verdict> {
  if (run.workload.steps[to] === undefined) return notApplicable(`the workload has no step ${to}`);
  const failed = await prefix(run, from);
  if (failed !== undefined) return failed;
  await run.driver.stopOperator();
  let lives = livesWithin(run.workload.steps, from, to);
  try {
    for (let index = from; index <= to; index++) {
      const step = run.workload.steps[index];
      if (step === undefined) break;
      if (step.action === 'apply' && run.workload.steps[index - 1]?.action === 'delete') {
        // re-creating under the same name needs the old object gone
        if (!(await run.driver.gone(run.place)))
          return notApplicable(
            'a finalizer holds the deleted object while the operator is stopped: it cannot be re-created unseen',
          );
      }
      run.recording.step = index;
      await run.driver.apply(run.place, step);
    }
    // a life deleted in the last step is unseen only if a finalizer does not keep it for the operator
    if (lives.some(([, deleted]) => deleted === to) && !(await run.driver.gone(run.place)))
      lives = lives.filter(([, deleted]) => deleted !== to);
  } finally {
    await run.driver.startOperator();
  }
  const writes = run.reference.steps
    .slice(from, to + 1)
    .reduce((sum, step) => sum + step.writes, 0);
  const bound = 2 * writes + (run.reference.steps[to]?.maxWritesPerReconcile ?? 0);
  return judge(run, to, bound, withoutUnseenEvents(run.reference.states, lives, to));
}

/**
 * Time travel: the bus' record of `target` goes back to where it was before
 * the step ahead of `index`, then step `index` is applied: its reconciles
 * read the older revision (unless the runtime catches it: read-your-own-writes).
 */
async function stale(run: Run, index: number, target: string): Promise<Verdict> {
  const step = run.workload.steps[index];
  if (step === undefined) return notApplicable(`the workload has no step ${index}`);
  if (step.action === 'delete' || run.workload.steps[index - 1]?.action === 'delete')
    return notApplicable('the object is deleted in this step or the one before');
  const failed = await prefix(run, index - 1);
  if (failed !== undefined) return failed;
  const then = await run.driver.busNow();
  const failedBefore = await prefix(run, index, index - 1);
  if (failedBefore !== undefined) return failedBefore;
  const removed = await run.driver.travelBack(run.place, target, then);
  if (typeof removed === 'string') return notApplicable(removed);
  if (removed === 0)
    return notApplicable(
      `${target} did not change in step ${index - 1}: nothing to travel back to`,
    );
  run.recording.step = index;
  await run.driver.apply(run.place, step);
  const reference = run.reference.steps[index];
  const bound = 2 * (reference?.writes ?? 0) + (reference?.maxWritesPerReconcile ?? 0);
  const verdict = await judge(run, index, bound);
  return {
    ...verdict,
    note: `the bus' ${target} taken back ${removed} revision${removed === 1 ? '' : 's'}, to before step ${index - 1}`,
  };
}

/**
 * The watcher's feed held behind the reconciler's writes: from the start of
 * the step's first reconcile (it saw the step's change) the watcher is held,
 * so neither what that reconcile writes nor the status written for it reaches
 * the bus; then a requeue reconciles again on the older records (the primary
 * as the step's change left it, what it owns as before the step), and the
 * feed is released. With `primary`, the bus' record of the primary is also
 * taken back to before the step once that reconcile is done: the requeue
 * reads the spec the operator already moved on from (time travel of the
 * primary; the feed held keeps the watcher from bringing it back early).
 */
async function lagging(run: Run, index: number, primary: boolean): Promise<Verdict> {
  const step = run.workload.steps[index];
  if (step === undefined) return notApplicable(`the workload has no step ${index}`);
  const failed = await prefix(run, index);
  if (failed !== undefined) return failed;
  run.recording.step = index;
  const held = run.recording.atStart({
    key: run.place.key,
    step: index,
    matches: await run.driver.seenAfter(run.place, step),
    run: () => run.driver.holdWatcher(),
  });
  const then = await run.driver.busNow();
  await run.driver.apply(run.place, step);
  let requeued: boolean;
  let removed = 0;
  try {
    const first = await within(held, CRASH_WITHIN_MS);
    if (first === undefined) {
      run.recording.disarm();
      return {
        outcome: 'unreached',
        note: "no reconcile of the step's change came",
        reconciles: run.recording.recordsOf(run.place.key, index).map(summaryOf),
      };
    }
    await until(() => first.outcome !== 'running', CRASH_WITHIN_MS);
    if (primary) removed = await run.driver.travelBackPrimary(run.place, then);
    const handled = await run.driver.requeue(run.place);
    requeued = await until(
      async () => run.recording.activity(run.place.key).running === 0 && (await handled()),
      CRASH_WITHIN_MS,
    );
  } finally {
    await run.driver.releaseWatcher();
  }
  const reference = run.reference.steps[index];
  const bound = 2 * (reference?.writes ?? 0) + 2 * (reference?.maxWritesPerReconcile ?? 0);
  const verdict = await judge(run, index, bound);
  const back = primary
    ? `, the bus' primary taken back ${removed} revision${removed === 1 ? '' : 's'}, to before the step`
    : '';
  return {
    ...verdict,
    note: requeued
      ? `the watcher's feed held from the step's first reconcile through a requeue${back}`
      : `the watcher's feed held from the step's first reconcile${back}; the requeue did not come`,
  };
}

/** The promise's value, or undefined after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) =>
      setTimeout(() => {
        resolve(undefined);
      }, ms).unref(),
    ),
  ]);
}

/** Whether the probe came true within `ms`, looking every 50 ms. */
async function until(probe: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** The oracles, against the reference's state at `index` (or what of it is owed, for an unobserved window). */
async function judge(
  run: Run,
  index: number,
  bound: number,
  expected = run.reference.states[index],
): Promise<Verdict> {
  if (expected === undefined) return notApplicable(`the reference has no step ${index}`);
  const reconciles = () => run.recording.recordsOf(run.place.key, index).map(summaryOf);
  const reached = await reach(watchOf(run), expected);
  if (!reached.ok)
    return {
      outcome: 'failed',
      oracle: oracleOf(expected, reached.state, reached.differences),
      detail: reached.differences,
      reconciles: reconciles(),
    };
  const changed = await hold(watchOf(run), expected);
  if (changed.length > 0)
    return {
      outcome: 'failed',
      oracle: 'stays-converged',
      detail: changed,
      reconciles: reconciles(),
    };
  const writes = run.recording
    .recordsOf(run.place.key, index)
    .reduce((sum, record) => sum + record.writes.length, 0);
  if (writes > bound)
    return {
      outcome: 'failed',
      oracle: 'bounded-writes',
      writes,
      detail: [`${writes} writes, more than ${bound} (twice the reference's plus one reconcile's)`],
      reconciles: reconciles(),
    };
  return { outcome: 'passed', writes, reconciles: reconciles() };
}

/** Which oracle a difference breaks, the most specific first. */
function oracleOf(
  expected: ObservedState,
  actual: ObservedState,
  lines: readonly string[],
): OracleName {
  if (
    expected.primary === null &&
    (actual.primary !== null || Object.keys(actual.owned).length > 0)
  )
    return 'nothing-left-behind';
  if (lines.length > 0 && lines.every((line) => line.startsWith('status.observedGeneration')))
    return 'observed-generation';
  if (lines.length > 0 && lines.every((line) => /^(Event|Effect) /.test(line)))
    return 'side-effects-once';
  return 'converges';
}

function notApplicable(note: string): Verdict {
  return { outcome: 'not-applicable', note };
}
