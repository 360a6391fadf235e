// Waiting on the bed without fixed sleeps: polling the observed state until
// it settles (the reference), until it matches the reference (a perturbed
// run), and watching that it stays so for a bounded window.
import type { BedDriver } from './bed-driver.js';
import { differences, generationObserved, type ObservedState } from './observed-state.js';
import type { Step } from './workload.js';

const POLL_MS = 200;
/** The reference's state counts as settled when unchanged this long. */
export const QUIET_MS = 1_500;
/** How long the reference may take to settle on one step. */
const SETTLE_WITHIN_MS = 60_000;
/** How long a perturbed run may take to reach the reference's state. */
export const REACH_WITHIN_MS = 20_000;
/** How long a perturbed run must then keep it. */
export const HOLD_MS = 1_500;

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

/** The reference: waits until the step is finished and the state stops changing. */
export async function settle(
  driver: BedDriver,
  namespace: string,
  name: string,
  step: Step,
): Promise<ObservedState> {
  const deadline = Date.now() + SETTLE_WITHIN_MS;
  let last: ObservedState | undefined;
  let since = Date.now();
  for (;;) {
    const state = await driver.observe(namespace, name);
    if (last === undefined || differences(last, state).length > 0 || !finished(state, step)) {
      last = state;
      since = Date.now();
    } else if (Date.now() - since >= QUIET_MS) return state;
    if (Date.now() > deadline)
      throw new ReferenceDidNotSettle(
        `unperturbed, the operator did not finish "${step.why}" within ${SETTLE_WITHIN_MS / 1000} s (${finished(state, step) ? 'its state kept changing' : step.action === 'delete' ? 'the object or what it made is still there' : 'no Ready condition for the current generation'}): fix the operator, then test again`,
      );
    await delay(POLL_MS);
  }
}

export type Reached =
  | { readonly ok: true; readonly state: ObservedState }
  | { readonly ok: false; readonly state: ObservedState; readonly differences: readonly string[] };

/** A perturbed run: waits until the state is the reference's and its generation observed. */
export async function reach(
  driver: BedDriver,
  namespace: string,
  name: string,
  expected: ObservedState,
  withinMs = REACH_WITHIN_MS,
): Promise<Reached> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const state = await driver.observe(namespace, name);
    const lines = differences(expected, state);
    if (!generationObserved(state))
      lines.push(
        `status.observedGeneration ${String(state.generations?.observed)} is not the generation ${String(state.generations?.generation)}`,
      );
    if (lines.length === 0) return { ok: true, state };
    if (Date.now() > deadline) return { ok: false, state, differences: lines };
    await delay(POLL_MS);
  }
}

/** Then: the state stays the reference's for a while (nothing flaps, nothing comes back). */
export async function hold(
  driver: BedDriver,
  namespace: string,
  name: string,
  expected: ObservedState,
): Promise<readonly string[]> {
  const until = Date.now() + HOLD_MS;
  while (Date.now() < until) {
    await delay(POLL_MS);
    const lines = differences(expected, await driver.observe(namespace, name));
    if (lines.length > 0) return lines;
  }
  return [];
}
