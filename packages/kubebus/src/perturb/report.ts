// What `kubebus test` and `perturbationTest` take and answer: the reference run, each
// schedule tried and what came of it, and the first failure with what the
// operator saw and wrote, the oracle it broke, and how to replay it.
import type { ScheduleKind } from './schedule.js';

/** The oracle a schedule broke. */
export type OracleName =
  /** the state (owned objects, status, finalizers) did not become the reference's */
  | 'converges'
  /** it became the reference's, then changed again */
  | 'stays-converged'
  /** status.observedGeneration never reached metadata.generation */
  | 'observed-generation'
  /** after a deletion, the object or something it made was still there */
  | 'nothing-left-behind'
  /** an Event the reference records once was lost or recorded again */
  | 'side-effects-once'
  /** more writes than twice the reference's plus one reconcile's */
  | 'bounded-writes';

export interface ReconcileSummary {
  readonly call: 'reconcile' | 'finalize';
  readonly attempt: number;
  /** generation, resourceVersion, and whether it was being deleted */
  readonly saw: string;
  /** what it read by name (`get Kind name`) or listed (`list Kind`) */
  readonly read: readonly string[];
  readonly wrote: readonly string[];
  readonly outcome: 'running' | 'ok' | 'error' | 'crashed' | 'handed-over';
}

export interface ScheduleResult {
  readonly schedule: string;
  /** unreached: the reconcile made fewer writes than k this time; not-applicable: see note */
  readonly outcome: 'passed' | 'failed' | 'unreached' | 'not-applicable';
  readonly seconds: number;
  readonly writes?: number;
  readonly oracle?: OracleName;
  /** what differed from the reference, one line each */
  readonly detail?: readonly string[];
  /** the object's reconciles during the perturbed step */
  readonly reconciles?: readonly ReconcileSummary[];
  readonly note?: string;
}

/** A schedule not run: what the operator would see is what the reference saw. */
export interface PrunedSchedule {
  readonly schedule: string;
  /** why its view is one the reference already had, one line */
  readonly why: string;
}

export interface ReferenceStep {
  readonly step: number;
  readonly why: string;
  readonly seconds: number;
  readonly writes: number;
  /** the most writes one reconcile of this step made: the k the intermediate schedules try */
  readonly maxWritesPerReconcile: number;
  readonly reconciles: readonly ReconcileSummary[];
}

export interface PerturbationReport {
  readonly operator: string;
  readonly seed: number;
  readonly budget: number;
  readonly layout: Layout;
  /** status intents that travelled through KUBEBUS_STATUS (layout one: only those the in-process writer declined) */
  readonly statusIntentsOnBus: number;
  readonly workload: { readonly name: string; readonly steps: readonly string[] };
  readonly reference: { readonly seconds: number; readonly steps: readonly ReferenceStep[] };
  /** how many schedules the reference allows, before pruning and the budget */
  readonly planned: number;
  /** schedules not run: what the operator would see is what the reference saw (prune.ts) */
  readonly pruned: readonly PrunedSchedule[];
  readonly schedules: readonly ScheduleResult[];
  /** intermediate schedules whose reconcile made fewer than k writes this time */
  readonly unreached: number;
  /** no schedule failed, and no kind tried had every schedule come back unreached */
  readonly passed: boolean;
  /** the first failing schedule, and the line that re-runs just it */
  readonly failure?: ScheduleResult & { readonly replay: string };
  /** the whole run, the bed's start included */
  readonly seconds: number;
}

/** A sample: a whole object of the operator's kind, or only its spec. */
export type Sample = object;

export interface PerturbationOptions {
  /** objects of the operator's kind (or only their specs) the workload starts from; objects of other kinds are fixtures, made first in every run, and a fixture's later documents its revisions, each applied as a step (fixtures.ts) */
  readonly samples?: readonly Sample[];
  /** the generated specs follow from it (default 1) */
  readonly seed?: number;
  /** how many schedules at most (default 24) */
  readonly budget?: number;
  /** run only this schedule (what a failure's replay line names) */
  readonly replay?: string;
  /** only schedules of these kinds (default: every kind) */
  readonly kinds?: readonly ScheduleKind[];
  /** a line as each step of the reference and each schedule finishes */
  readonly progress?: (line: string) => void;
  /** the command that re-runs one schedule (default: the perturbationTest call) */
  readonly replayLine?: (schedule: string) => string;
  /** KUBEBUS_* settings for the operator's roles */
  readonly env?: Readonly<Record<string, string>>;
  /** how long a perturbed run may take to reach the reference's state, in ms (default 60 s) */
  readonly reachWithinMs?: number;
  /** report every Deployment and StatefulSet ready, as kubelets would (default true) */
  readonly standIn?: boolean;
  /**
   * three (default): each role apart, as the generated Deployments run them;
   * one: the reconciler and the status writer in one process, as `kubebus run`
   * runs every role (its status written in process, ADR 0028), the watcher
   * still apart so its feed can be held. No status-restart there: in one
   * process the writer never crashes alone.
   */
  readonly layout?: Layout;
}

export type Layout = 'three' | 'one';
