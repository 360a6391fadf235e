// perturbationTest: the operator on one real test bed, first unperturbed (the
// reference), then under each schedule the reference allows, up to the
// budget, stopping at the first failure. `kubebus test` is this with a report.
import { isDeepStrictEqual } from 'node:util';
import type { Operator } from '@kubebus/shared/definition';
import { durationMs } from '@kubebus/shared/config';
import { TEST_BACKOFF_CAP } from '../testing/environment.js';
import { BedDriver } from './bed-driver.js';
import { timingOf, type Timing } from './convergence.js';
import { RecordingOperator } from './recording-operator.js';
import { referenceRun, type Reference } from './reference-run.js';
import type { Layout, PerturbationOptions, PerturbationReport, ScheduleResult } from './report.js';
import { runSchedule } from './run-schedule.js';
import { placeOf } from './place.js';
import { pruneSchedules } from './prune.js';
import { parseSchedule, SCHEDULE_KINDS, type Schedule, type ScheduleKind } from './schedule.js';
import { overlapApplies, workloadOf, type Step, type Workload } from './workload.js';
import { kindsNeverReached } from './unreached.js';

export const DEFAULT_BUDGET = 24;

export class PerturbationSetupError extends Error {
  override readonly name = 'PerturbationSetupError';
}

/**
 * Every schedule the reference allows, the kinds interleaved so a small
 * budget tries each (only those of `kinds`, when given).
 */
export function plannedSchedules(
  workload: Workload,
  reference: Reference,
  kinds: readonly ScheduleKind[] = SCHEDULE_KINDS,
): Schedule[] {
  // a reconcile stopped after each of its writes: crashed there, or paused there while its partition is handed over
  const afterEachWrite = (kind: 'intermediate' | 'handover' | 'overlap'): Schedule[] =>
    reference.steps.flatMap((step) =>
      Array.from({ length: step.maxWritesPerReconcile }, (_, index) => ({
        kind,
        step: step.step,
        k: index + 1,
      })),
    );
  const intermediate = afterEachWrite('intermediate');
  const unobserved: Schedule[] = workload.steps
    .slice(1)
    .map((_, index) => ({ kind: 'unobserved' as const, from: index, to: index + 1 }));
  const stale = staleSchedules(workload, reference);
  const statusRestart: Schedule[] = workload.steps.flatMap((step, index) =>
    restartsStatus(step, reference.states[index], reference.states[index - 1])
      ? [{ kind: 'status-restart' as const, step: index }]
      : [],
  );
  const handover = afterEachWrite('handover');
  const lagging = laggingSchedules(workload, reference);
  // paused while the next step changes the object (a spec change or the delete), in a step that keeps it
  const overlap = afterEachWrite('overlap').filter(
    (schedule) => 'step' in schedule && overlapApplies(workload.steps, schedule.step),
  );
  const lists = [intermediate, unobserved, stale, statusRestart, handover, lagging, overlap].filter(
    (list) => list[0] !== undefined && kinds.includes(list[0].kind),
  );
  const all: Schedule[] = [];
  for (let index = 0; index < Math.max(0, ...lists.map((list) => list.length)); index++)
    for (const list of lists) {
      const schedule = list[index];
      if (schedule !== undefined) all.push(schedule);
    }
  return all;
}

type State = Reference['states'][number] | undefined;

/**
 * Whether the status writer gets an intent of the step to crash holding: a
 * spec applied whose reference ends with a status, or a fixture's change
 * that changed the status (an unchanged one sends no intent).
 */
function restartsStatus(step: Step, state: State, before: State): boolean {
  if (step.action === 'delete' || !wroteStatus(state)) return false;
  return (
    step.action === 'apply' || !isDeepStrictEqual(state?.primary?.status, before?.primary?.status)
  );
}

/** Whether the reference's object has a status at the end of the step (its writer wrote one). */
function wroteStatus(state: State): boolean {
  const status = state?.primary?.status;
  return typeof status === 'object' && status !== null && Object.keys(status).length > 0;
}

/**
 * A stale schedule per owned object that the step before changed (pruned as
 * Sieve prunes: travelling back an object that did not change shows the
 * operator nothing new), for each step that keeps the object.
 */
function staleSchedules(workload: Workload, reference: Reference): Schedule[] {
  const schedules: Schedule[] = [];
  for (let step = 1; step < workload.steps.length; step++) {
    // the object kept through both: a spec applied or a fixture changed
    if (
      [workload.steps[step], workload.steps[step - 1]].some(
        (kept) => kept === undefined || kept.action === 'delete',
      )
    )
      continue;
    const then = reference.states[step - 1]?.owned ?? {};
    const before = reference.states[step - 2]?.owned ?? {};
    for (const target of Object.keys(then).sort())
      if (JSON.stringify(then[target]) !== JSON.stringify(before[target]))
        schedules.push({ kind: 'stale', step, target });
  }
  return schedules;
}

/**
 * A lagging schedule per step whose reconciles wrote (a feed held behind the
 * writes of a step that made none holds nothing back); with the primary
 * taken back too, for each such step that changes a spec the step before
 * applied.
 */
function laggingSchedules(workload: Workload, reference: Reference): Schedule[] {
  const schedules: Schedule[] = [];
  for (const { step, writes } of reference.steps) {
    if (writes === 0) continue;
    schedules.push({ kind: 'lagging', step, primary: false });
    if (workload.steps[step]?.action === 'apply' && workload.steps[step - 1]?.action === 'apply')
      schedules.push({ kind: 'lagging', step, primary: true });
  }
  return schedules;
}

export async function perturbationTest(
  operator: Operator,
  options: PerturbationOptions = {},
): Promise<PerturbationReport> {
  const started = performance.now();
  const seed = options.seed ?? 1;
  const budget = options.budget ?? DEFAULT_BUDGET;
  const say = options.progress ?? (() => undefined);
  const layout = options.layout ?? 'three';
  let only: Schedule | undefined;
  if (options.replay !== undefined) {
    const parsed = parseSchedule(options.replay);
    if ('error' in parsed) throw new PerturbationSetupError(parsed.error);
    only = parsed;
  }
  const kinds = kindsIn(layout, only === undefined ? options.kinds : [only.kind]);
  const workload = workloadOf(operator.for, {
    seed,
    ...(options.samples ? { samples: options.samples } : {}),
  });
  const replayLine =
    options.replayLine ??
    ((schedule: string) => `perturbationTest(operator, { replay: '${schedule}', seed: ${seed} })`);
  const timing = timingOfOptions(options);
  const recording = new RecordingOperator(operator);
  say(
    `starting the test bed (kube-apiserver, etcd, kube-controller-manager, nats-server); ${layout === 'one' ? 'the reconciler and the status writer in one process, as kubebus run has them' : 'each role apart, as the generated Deployments run them'}`,
  );
  const driver = await BedDriver.start(recording, options);
  try {
    say(`reference: ${workload.steps.length} steps on ${operator.for.kind} ${workload.name}`);
    const reference = await referenceRun(driver, recording, workload, timing);
    for (const step of reference.steps)
      say(
        `  step ${step.step} ${step.why}: ${step.writes} writes, at most ${step.maxWritesPerReconcile} per reconcile (${step.seconds.toFixed(1)} s)`,
      );
    const planned = plannedSchedules(workload, reference, kinds);
    // a replay runs what it names, pruned or not
    const { kept, pruned } =
      only === undefined ? pruneSchedules(planned, reference) : { kept: [only], pruned: [] };
    if (pruned.length > 0)
      say(`pruned ${pruned.length} of ${planned.length} schedules: their view is the reference's`);
    const chosen = kept.slice(0, budget);
    const schedules: ScheduleResult[] = [];
    let failure: PerturbationReport['failure'];
    for (const [index, schedule] of chosen.entries()) {
      const result = await runSchedule(
        {
          driver,
          recording,
          workload,
          reference,
          timing,
          place: placeOf(operator.for, `kbt-${index}`, workload.name),
        },
        schedule,
      );
      schedules.push(result);
      say(
        `[${index + 1}/${chosen.length}] ${result.schedule}: ${result.outcome}${result.oracle === undefined ? '' : ` (${result.oracle})`} ${result.seconds.toFixed(1)} s`,
      );
      if (result.outcome === 'failed') {
        failure = { ...result, replay: replayLine(result.schedule) };
        break;
      }
    }
    const unreached = schedules.filter((s) => s.outcome === 'unreached').length;
    // every crash point (pause, held feed) of a kind missed: nothing of it was tested
    const neverReached = failure === undefined ? kindsNeverReached(schedules) : [];
    for (const kind of neverReached)
      say(`every ${kind} schedule came back unreached: none of them perturbed anything`);
    const allUnreached = neverReached.length > 0;
    return {
      operator: operator.name,
      seed,
      budget,
      layout,
      statusIntentsOnBus: await driver.statusIntentsOnBus(),
      workload: { name: workload.name, steps: workload.steps.map((step) => step.why) },
      reference: { seconds: reference.seconds, steps: reference.steps },
      planned: planned.length,
      pruned,
      schedules,
      unreached,
      passed: failure === undefined && !allUnreached,
      ...(failure === undefined ? {} : { failure }),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await driver.stop();
  }
}

/**
 * The kinds a layout can run: in one process the status writer never crashes
 * alone, so status-restart needs the writer apart (asked for there, it is a
 * setup error; by default it is left out).
 */
function kindsIn(layout: Layout, asked: readonly ScheduleKind[] | undefined): ScheduleKind[] {
  if (layout === 'three') return [...(asked ?? SCHEDULE_KINDS)];
  if (asked?.includes('status-restart') === true)
    throw new PerturbationSetupError(
      'status-restart needs the status writer in a process of its own: use --layout three (in one process it never crashes alone; a crash of the whole is what intermediate does)',
    );
  return (asked ?? SCHEDULE_KINDS).filter((kind) => kind !== 'status-restart');
}

/** The waits, from the roles' backoff cap (the bed's, or the one the options set). */
function timingOfOptions(options: PerturbationOptions): Timing {
  const cap = durationMs(TEST_BACKOFF_CAP).safeParse(options.env?.KUBEBUS_BACKOFF_CAP);
  if (!cap.success)
    throw new PerturbationSetupError(
      `KUBEBUS_BACKOFF_CAP "${options.env?.KUBEBUS_BACKOFF_CAP}" is not a duration: give one such as 2s or 500ms`,
    );
  const capMs = cap.data;
  const reachWithinMs = options.reachWithinMs;
  if (reachWithinMs !== undefined && !(reachWithinMs > 0))
    throw new PerturbationSetupError(
      `reachWithinMs ${reachWithinMs} must be a positive number of milliseconds`,
    );
  return timingOf(capMs, reachWithinMs);
}
