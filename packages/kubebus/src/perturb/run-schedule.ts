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
import { overlapApplies, type Workload } from './workload.js';

/** How long the armed reconcile may take to come (its work is redelivered quickly). */
const CRASH_WITHIN_MS = 30_000;
/** How long a released zombie may take to finish. */
const ZOMBIE_ENDS_WITHIN_MS = 30_000;
/**
 * How long the first instance may take to notice it lost the partition: its
 * next lease renewal fails (every 3 s). Only then is the zombie released — a
 * lease expires on the server only after the holder's own trust in it ran out.
 */
const FENCED_WITHIN_MS = 15_000;

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
  await run.driver.prepare(run.place, run.workload.fixtures);
  const verdict = await perturbed(run, schedule);
  run.recording.disarm();
  run.driver.statusHold.disarm();
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
    case 'status-restart':
      return statusRestart(run, schedule.step);
    case 'handover':
      return handover(run, schedule.step, schedule.k);
    case 'lagging':
      return lagging(run, schedule.step, schedule.primary);
    case 'overlap':
      return overlap(run, schedule.step, schedule.k);
  }
}

/** Resolves with `value` after `ms`, unless the other comes first (a bound, not a wait). */
function after<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) =>
    setTimeout(() => {
      resolve(value);
    }, ms).unref(),
  );
}

/**
 * Steps `from`..`until` - 1, unperturbed, each reaching the reference's
 * state. Around a fixture's change the reconciles are also waited out: the
 * object's state alone does not show a late reconcile of the step before (it
 * would be taken for the change's), nor whether the change's own reconcile
 * came yet (the next step would overlap it).
 */
async function prefix(run: Run, until: number, from = 0): Promise<Verdict | undefined> {
  for (let index = from; index < until; index++) {
    const step = run.workload.steps[index];
    const expected = run.reference.states[index];
    if (step === undefined || expected === undefined) break;
    run.recording.step = index;
    await run.driver.apply(run.place, step);
    const reached = await reach(watchOf(run), expected);
    const fixtureNear =
      step.action === 'fixture' || run.workload.steps[index + 1]?.action === 'fixture';
    const moved = reached.ok && fixtureNear ? await hold(watchOf(run), expected) : [];
    if (!reached.ok || moved.length > 0)
      return {
        outcome: 'failed',
        oracle: reached.ok
          ? 'stays-converged'
          : oracleOf(expected, reached.state, reached.differences),
        detail: [
          `before the perturbation, at step ${index} (${step.why}):`,
          ...(reached.ok ? moved : reached.differences),
        ],
        reconciles: run.recording.recordsOf(run.place.key, index).map(summaryOf),
      };
  }
  return undefined;
}

/**
 * The steps before `index`, then step `index` with its first reconcile armed
 * to stop right after its k-th write — armed before the apply, since the
 * reconcile may start before apply returns; a verdict when it did not come to that.
 */
async function stopAfterWrite(
  run: Run,
  index: number,
  k: number,
  mode: 'crash' | 'pause' | 'hold',
): Promise<Verdict | 'stopped'> {
  const step = run.workload.steps[index];
  if (step === undefined) return notApplicable(`the workload has no step ${index}`);
  const failed = await prefix(run, index);
  if (failed !== undefined) return failed;
  run.recording.step = index;
  const armed = run.recording.arm({
    key: run.place.key,
    step: index,
    k,
    matches: await run.driver.seenAfter(run.place, step),
    mode,
  });
  await run.driver.apply(run.place, step);
  const came = await Promise.race([armed, after(CRASH_WITHIN_MS, 'unreached' as const)]);
  if (came !== 'unreached') return 'stopped';
  run.recording.disarm();
  return {
    outcome: 'unreached',
    note: `the step's first reconcile made fewer than ${k} writes this time`,
    reconciles: run.recording.recordsOf(run.place.key, index).map(summaryOf),
  };
}

async function intermediate(run: Run, index: number, k: number): Promise<Verdict> {
  const stopped = await stopAfterWrite(run, index, k, 'crash');
  if (stopped !== 'stopped') return stopped;
  await run.driver.crash();
  const reference = run.reference.steps[index];
  const bound = 2 * (reference?.writes ?? 0) + Math.max(k, reference?.maxWritesPerReconcile ?? 0);
  return judge(run, index, bound);
}

/**
 * The status writer crashed between intent and write: it takes the object's
 * first intent of the step and dies holding it (nothing written, nothing
 * acked); it stays down for the quiet window while the reconciler runs on,
 * reading the status from before the intent, then a new writer is handed it.
 */
async function statusRestart(run: Run, index: number): Promise<Verdict> {
  const step = run.workload.steps[index];
  if (step === undefined) return notApplicable(`the workload has no step ${index}`);
  const failed = await prefix(run, index);
  if (failed !== undefined) return failed;
  run.recording.step = index;
  const seen = await run.driver.seenAfter(run.place, step);
  const held = run.driver.statusHold.arm({
    key: run.place.key,
    matches: (intent) =>
      seen({
        uid: intent.uid,
        generation: intent.observedGeneration,
        resourceVersion: '',
        deleting: false,
        startedAt: performance.now(),
      }),
  });
  await run.driver.apply(run.place, step);
  const came = await Promise.race([held, after(CRASH_WITHIN_MS, 'unreached' as const)]);
  if (came === 'unreached') {
    run.driver.statusHold.disarm();
    return {
      outcome: 'unreached',
      note: `no status intent of the step's came to the status writer`,
      reconciles: run.recording.recordsOf(run.place.key, index).map(summaryOf),
    };
  }
  await run.driver.restartStatusWriter(performance.now(), run.timing.quietMs);
  const reference = run.reference.steps[index];
  const bound = 2 * (reference?.writes ?? 0) + (reference?.maxWritesPerReconcile ?? 0);
  const verdict = await judge(run, index, bound);
  return {
    ...verdict,
    note: `the status writer crashed holding the step's first intent, down ${(run.timing.quietMs / 1000).toFixed(1)} s`,
  };
}

/**
 * A partition handed over mid-reconcile: the step's first reconcile pauses
 * after its k-th write, its work partition goes to a second instance of the
 * operator, which reconciles the object (its state reaches the reference's,
 * or the bound passes); then the paused reconcile is released to finish — a
 * zombie, whose later writes only the runtime's fencing can stop.
 */
async function handover(run: Run, index: number, k: number): Promise<Verdict> {
  const expected = run.reference.states[index];
  if (expected === undefined) return notApplicable(`the reference has no step ${index}`);
  const stopped = await stopAfterWrite(run, index, k, 'pause');
  if (stopped !== 'stopped') return stopped;
  const zombie = run.recording.zombie;
  if (zombie === undefined) return notApplicable('no reconcile was paused');
  let moved: true | string;
  let reachedMeanwhile = false;
  try {
    moved = await run.driver.handOver(run.place);
    if (moved === true) {
      await zombie.fencedWithin(FENCED_WITHIN_MS);
      reachedMeanwhile = (await reach(watchOf(run), expected)).ok;
    }
  } finally {
    zombie.release();
  }
  const ended = await Promise.race([zombie.ended, after(ZOMBIE_ENDS_WITHIN_MS, 'running')]);
  const reference = run.reference.steps[index];
  const bound = 2 * (reference?.writes ?? 0) + Math.max(k, reference?.maxWritesPerReconcile ?? 0);
  const verdict = moved === true ? await judge(run, index, bound) : notApplicable(moved);
  await run.driver.endHandOver();
  const later = zombie.record.writes.slice(zombie.writesAtPause);
  if (moved !== true)
    return { ...verdict, note: `paused after write ${k}; no hand-over: ${moved}` };
  return {
    ...verdict,
    note: [
      `paused after write ${k}; the second instance ${reachedMeanwhile ? 'reached' : 'did not reach'} the reference's state meanwhile`,
      `released, the zombie was ${zombie.fenced ? '' : 'not '}fenced`,
      ...afterRelease('', later, ended),
    ].join(', '),
  };
}

/**
 * The next change while a reconcile of this one runs: the step's first
 * reconcile pauses after its k-th write, step `index` + 1 (a spec change or
 * the delete) is applied and the bus records it, then the reconcile is
 * released to finish on the spec it saw — its later writes land, its status
 * intent is now stale (the status writer drops it). The next reconcile must
 * still reach the reference's state after step `index` + 1 — where an
 * operator that remembers in its status what it made relies on being shown
 * the status its runtime's pending intent makes (ADR 0019).
 */
async function overlap(run: Run, index: number, k: number): Promise<Verdict> {
  const next = run.workload.steps[index + 1];
  if (!overlapApplies(run.workload.steps, index) || next === undefined)
    return notApplicable(
      `step ${index} does not keep the object, or step ${index + 1} does not change or delete it`,
    );
  const stopped = await stopAfterWrite(run, index, k, 'hold');
  if (stopped !== 'stopped') return stopped;
  const paused = run.recording.zombie;
  if (paused === undefined) return notApplicable('no reconcile was paused');
  let onBus: boolean;
  try {
    run.recording.step = index + 1;
    await run.driver.apply(run.place, next);
    onBus = await run.driver.recordedOnBus(run.place);
  } finally {
    paused.release();
  }
  const ended = await Promise.race([paused.ended, after(ZOMBIE_ENDS_WITHIN_MS, 'running')]);
  const writes = run.reference.steps
    .slice(index, index + 2)
    .reduce((sum, step) => sum + step.writes, 0);
  const bound =
    2 * writes + Math.max(k, run.reference.steps[index + 1]?.maxWritesPerReconcile ?? 0);
  const verdict = await judge(run, index + 1, bound);
  const later = paused.record.writes.slice(paused.writesAtPause);
  return {
    ...verdict,
    // the paused reconcile (of step `index`) first, then those of the step judged
    ...(verdict.outcome === 'not-applicable'
      ? {}
      : { reconciles: [summaryOf(paused.record), ...(verdict.reconciles ?? [])] }),
    note: [
      `paused after write ${k} while step ${index + 1} (${next.why}) was applied${onBus ? '' : ' (the bus had not recorded it in time)'}`,
      ...afterRelease('then ', later, ended),
    ].join(', '),
  };
}

/** What a paused reconcile did once released: its writes since the pause, and how it ended. */
function afterRelease(
  then: string,
  later: readonly string[],
  ended: string | undefined,
): [string, string] {
  return [
    later.length === 0 ? `${then}wrote nothing more` : `${then}wrote ${later.join(', ')}`,
    ended === undefined
      ? 'and returned'
      : ended === 'running'
        ? 'and was still running'
        : `and failed: ${ended}`,
  ];
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
    await run.driver.startOperatorCaughtUp(run.place);
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
