// The reference: the workload run unperturbed, each step waited on until its
// state settles. Its end states are what every perturbed run must reach; its
// writes per reconcile say where the intermediate schedules stop a reconcile.
import type { BedDriver } from './bed-driver.js';
import { ReferenceDidNotSettle, settle, type Timing } from './convergence.js';
import { fixtureName, readsFixture, watchedFixture, type Fixture } from './fixtures.js';
import type { ObservedState } from './observed-state.js';
import { generalized, inPlace, placeOf, type Place } from './place.js';
import type { ReconcileRecord, RecordingOperator } from './recording-operator.js';
import type { ReconcileSummary, ReferenceStep } from './report.js';
import type { Workload } from './workload.js';

export interface Reference {
  readonly steps: readonly ReferenceStep[];
  readonly states: readonly ObservedState[];
  readonly seconds: number;
}

/** The reference's place on the bed (a perturbed run's is kbt-<n>). */
export function referencePlace(recording: RecordingOperator, workload: Workload): Place {
  return placeOf(recording.definition.for, 'kbt-reference', workload.name);
}

export function summaryOf(record: ReconcileRecord): ReconcileSummary {
  const { seen } = record;
  return {
    call: record.call,
    attempt: record.attempt,
    saw: `generation ${seen.generation}, resourceVersion ${seen.resourceVersion}${seen.deleting ? ', being deleted' : ''}`,
    read: [...record.reads],
    wrote: [...record.writes],
    outcome: record.outcome,
  };
}

export async function referenceRun(
  driver: BedDriver,
  recording: RecordingOperator,
  workload: Workload,
  timing: Timing,
): Promise<Reference> {
  const started = performance.now();
  const place = referencePlace(recording, workload);
  await driver.prepare(place, workload.fixtures);
  const steps: ReferenceStep[] = [];
  const states: ObservedState[] = [];
  for (const [index, step] of workload.steps.entries()) {
    const stepStarted = performance.now();
    recording.step = index;
    const watch = { driver, place, timing, activity: () => recording.activity(place.key) };
    const startedBefore = watch.activity().started;
    await driver.apply(place, step);
    const watched = step.action === 'fixture' && watchedFixture(recording.definition, step.fixture);
    states.push(await settle(watch, step, watched ? startedBefore : undefined));
    if (step.action === 'fixture' && !watched) unwatchedRead(recording, place, step.fixture);
    const records = recording.recordsOf(place.key, index);
    steps.push({
      step: index,
      why: step.why,
      seconds: (performance.now() - stepStarted) / 1000,
      writes: records.reduce((sum, record) => sum + record.writes.length, 0),
      maxWritesPerReconcile: Math.max(0, ...records.map((record) => record.writes.length)),
      // in every run's names: what a perturbed run and pruning compare with
      reconciles: generalized(place, records.map(summaryOf)),
    });
  }
  return { steps, states, seconds: (performance.now() - started) / 1000 };
}

/**
 * A fixture the operator reads but does not watch: its change reaches the
 * object only with the next reconcile that happens to come (a resync, a
 * spec change) — the bug a samples file that changes it asks about.
 */
function unwatchedRead(recording: RecordingOperator, place: Place, written: Fixture): void {
  const fixture = inPlace(place, written) as Fixture;
  const reads = recording.recordsOf(place.key).flatMap((record) => record.reads);
  // refused even if a reconcile came (a requeue-after, a retry): then the state depends on when
  if (readsFixture(reads, fixture))
    throw new ReferenceDidNotSettle(
      `the operator reads ${fixtureName(written)} but does not watch ${fixture.kind}s, so its change (the samples' next document of it) reaches the object only with whatever reconcile comes next; add ${fixture.kind}s to its watches (references or map), or leave the revision out of the samples`,
    );
}
