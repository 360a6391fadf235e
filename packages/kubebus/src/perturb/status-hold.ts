// The status writer's hold point in `kubebus test` (status-applier.ts): the
// status-restart schedule arms it on the object's intent of one step. The
// writer that takes that intent parks it — nothing judged, written or acked —
// and is dead from then on: every intent it is handed later is parked too, so
// it writes nothing more, as a crashed process would not. The driver then
// abandons the parked intents (each ends as AbandonedReconcile, which the work
// loop hands back to the bus uncounted) as it stops that writer, and starts a
// new one, which is handed the intent again.
import type { StatusIntent } from '@kubebus/shared/bus';
import { AbandonedReconcile } from '@kubebus/shared/runtime';
import type { IntentTaken } from '@kubebus/status-writer/service';

export interface HoldArm {
  /** the run's place key (place.ts): the intent's namespace, or its name when cluster-scoped */
  readonly key: string;
  /** which intent to hold: the first of the object's that matches (the step's) */
  readonly matches: (intent: StatusIntent) => boolean;
}

/** held: a writer took the intent and is now dead; unreached: disarmed before that. */
export type HoldResult = 'held' | 'unreached';

/** The place key of an intent's object, as the recording keys reconciles. */
export function placeKeyOf(intent: StatusIntent): string {
  return intent.key.namespace || intent.key.name;
}

export class StatusHold {
  #armed: (HoldArm & { readonly settle: (result: HoldResult) => void }) | undefined;
  #incarnations = 0;
  /** the writer incarnation that held an intent last; it and those before it are dead */
  #dead = -1;
  /** the incarnations up to this one are abandoned: what they are handed ends at once */
  #abandoned = -1;
  readonly #parked = new Set<() => void>();

  /** The hold point for the next start of the status writer. */
  incarnation(): IntentTaken {
    const incarnation = this.#incarnations++;
    return (intent, signal) => this.#taken(incarnation, intent, signal);
  }

  arm(arm: HoldArm): Promise<HoldResult> {
    this.disarm();
    return new Promise((resolve) => {
      this.#armed = { ...arm, settle: resolve };
    });
  }

  disarm(): void {
    this.#armed?.settle('unreached');
    this.#armed = undefined;
  }

  /** The dead writers are being stopped: what they parked goes back to the bus. */
  abandon(): void {
    this.#abandoned = this.#dead;
    for (const end of this.#parked) end();
    this.#parked.clear();
  }

  #taken(incarnation: number, intent: StatusIntent, signal: AbortSignal): Promise<void> {
    if (incarnation <= this.#dead) return this.#park(incarnation, signal);
    const armed = this.#armed;
    if (armed === undefined || placeKeyOf(intent) !== armed.key || !armed.matches(intent))
      return Promise.resolve();
    this.#armed = undefined;
    this.#dead = incarnation;
    armed.settle('held');
    return this.#park(incarnation, signal);
  }

  /** Never settles until abandoned (or the writer's own signal aborts). */
  #park(incarnation: number, signal: AbortSignal): Promise<never> {
    return new Promise((_, reject) => {
      const end = () => {
        this.#parked.delete(end);
        reject(new AbandonedReconcile('the crashed status writer was stopped'));
      };
      if (signal.aborted || incarnation <= this.#abandoned) end();
      else {
        this.#parked.add(end);
        signal.addEventListener('abort', end, { once: true });
      }
    });
  }
}
