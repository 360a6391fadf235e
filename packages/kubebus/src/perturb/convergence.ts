// Waiting on the bed without fixed sleeps: polling the observed state until
// it settles (the reference), until it matches the reference (a perturbed
// run), and watching that it stays so. Settled means quiet: the state and the
// object's reconciles unchanged, none running, for longer than the backoff
// cap — a retry the runtime has pending lands within the cap, so it lands
// inside the window instead of after the state is taken.
import type { BedDriver } from './bed-driver.js';
import type { Place } from './place.js';
import { differences, generationObserved, repeated, type ObservedState } from './observed-state.js';
import type { Activity } from './recording-operator.js';
import type { Step } from './workload.js';

const POLL_MS = 200;
/** Slack over the backoff cap for a retry's timer on a loaded machine. */
const RETRY_MARGIN_MS = 1_500;
/** How long the reference may take to settle on one step. */
const SETTLE_WITHIN_MS = 60_000;
/** How long a perturbed run may take to reach the reference's state: a role restart, lease takeover and redelivery on a loaded machine. */
export const DEFAULT_REACH_WITHIN_MS = 60_000;

export interface Timing {
  /** how long the state and the reconciles must stay unchanged, none running */
  readonly quietMs: number;
  readonly reachWithinMs: number;
}

export function timingOf(backoffCapMs: number, reachWithinMs = DEFAULT_REACH_WITHIN_MS): Timing {
  return { quietMs: backoffCapMs + RETRY_MARGIN_MS, reachWithinMs };
}

/** One object on the bed, and what the recording shows of its reconciles. */
export interface Watch {
  readonly driver: Pick<BedDriver, 'observe'>;
  readonly place: Place;
  readonly timing: Timing;
  readonly activity: () => Activity;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ReferenceDidNotSettle extends Error {
  override readonly name = 'ReferenceDidNotSettle';
}

/** Done with a step: the spec observed and Ready reported, or the object and all it made gone. */
function finished(state: ObservedState, step: Step): boolean {
  if (step.action === 'delete')
    return state.primary === null && Object.keys(state.owned).length === 0;
  const conditions =
    (state.primary?.status as { conditions?: { type?: string }[] } | null)?.conditions ?? [];
  return (
    state.primary !== null &&
    !state.primary.deleting &&
    generationObserved(state) &&
    conditions.some((condition) => condition.type === 'Ready')
  );
}

/** Tracks since when nothing changed: the state's differences and the reconciles started or running. */
class Quiet {
  #since = Date.now();
  #last: Activity | undefined;

  constructor(
    private readonly watch: Watch,
    private readonly quietMs: number,
  ) {}

  /** Whether it is quiet now, given whether the state changed since the last look. */
  look(changed: boolean): boolean {
    const now = this.watch.activity();
    const moved =
      this.#last === undefined ||
      now.started !== this.#last.started ||
      now.running !== this.#last.running;
    this.#last = now;
    if (changed || moved || now.running > 0) {
      this.#since = Date.now();
      return false;
    }
    return Date.now() - this.#since >= this.quietMs;
  }
}

/**
 * The reference: waits until the step is finished and the state and its
 * reconciles are quiet. A fixture's change leaves the object's generation as
 * it was: with `startedBefore` (the count of the object's reconciles started
 * before the step), the step is finished only once a reconcile started after
 * it — the watch the operator declared brought the change.
 */
export async function settle(
  watch: Watch,
  step: Step,
  startedBefore?: number,
): Promise<ObservedState> {
  const deadline = Date.now() + SETTLE_WITHIN_MS;
  const quiet = new Quiet(watch, watch.timing.quietMs);
  const reconciled = () => startedBefore === undefined || watch.activity().started > startedBefore;
  let last: ObservedState | undefined;
  for (;;) {
    const state = await watch.driver.observe(watch.place);
    const changed = last === undefined || differences(last, state).length > 0;
    last = state;
    if (quiet.look(changed || !finished(state, step) || !reconciled())) return state;
    if (Date.now() > deadline)
      throw new ReferenceDidNotSettle(
        `unperturbed, the operator did not finish "${step.why}" within ${SETTLE_WITHIN_MS / 1000} s (${unfinished(state, step, reconciled())}): fix the operator, then test again`,
      );
    await delay(POLL_MS);
  }
}

function unfinished(state: ObservedState, step: Step, reconciled: boolean): string {
  if (!reconciled)
    return `no reconcile of the object came after it: does its watch map the changed object to this one?`;
  if (finished(state, step)) return 'its state or its reconciles kept changing';
  return step.action === 'delete'
    ? 'the object or what it made is still there'
    : 'no Ready condition for the current generation';
}

export type Reached =
  | { readonly ok: true; readonly state: ObservedState }
  | { readonly ok: false; readonly state: ObservedState; readonly differences: readonly string[] };

/** A perturbed run: waits until the state is the reference's and its generation observed. */
export async function reach(watch: Watch, expected: ObservedState): Promise<Reached> {
  const deadline = Date.now() + watch.timing.reachWithinMs;
  for (;;) {
    const state = await watch.driver.observe(watch.place);
    const lines = differences(expected, state);
    if (!generationObserved(state))
      lines.push(
        `status.observedGeneration ${String(state.generations?.observed)} is not the generation ${String(state.generations?.generation)}`,
      );
    if (lines.length === 0) return { ok: true, state };
    // all else converged and a side effect repeated: that never converges, and waiting on
    // the rest first keeps a slow machine's unfinished state out of the verdict
    const settledButRepeated = repeated(expected, state).length === lines.length;
    if (settledButRepeated || Date.now() > deadline)
      return { ok: false, state, differences: lines };
    await delay(POLL_MS);
  }
}

/** Then: the state stays the reference's until its reconciles are quiet (nothing flaps, nothing comes back). */
export async function hold(watch: Watch, expected: ObservedState): Promise<readonly string[]> {
  const deadline = Date.now() + watch.timing.reachWithinMs;
  const quiet = new Quiet(watch, watch.timing.quietMs);
  for (;;) {
    const lines = differences(expected, await watch.driver.observe(watch.place));
    if (lines.length > 0) return lines;
    if (quiet.look(false)) return [];
    if (Date.now() > deadline)
      return [
        `the state was the reference's, but the object's reconciles did not stop within ${watch.timing.reachWithinMs / 1000} s`,
      ];
    await delay(POLL_MS);
  }
}
