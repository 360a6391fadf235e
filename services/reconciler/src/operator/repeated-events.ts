// An Event a reconcile records again as it was — the same object, type,
// reason and note — is not sent again for a while: every round of an object
// (its own status write starts one, a child's change another) would otherwise
// add an identical row to `kubectl describe`. client-go's recorder folds such
// Events into one with a count; here the first stands for the rest. Kept per
// process and bounded: a replica that has not seen it sends it once more.
import { createHash } from 'node:crypto';

/** How long an Event recorded stands for the same one recorded again. */
export const REPEAT_WINDOW_MS = 10 * 60_000;
const CAPACITY = 10_000;

export class RepeatedEvents {
  /** digest of the Event → when it was last sent; the oldest first */
  readonly #sent = new Map<string, number>();

  constructor(
    private readonly windowMs = REPEAT_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether to send it: not when the same one was sent within the window (and then it counts as sent now). */
  fresh(uid: string, type: string, reason: string, note: string): boolean {
    const key = createHash('sha256').update(`${uid}\0${type}\0${reason}\0${note}`).digest('base64');
    const now = this.now();
    const last = this.#sent.get(key);
    if (last !== undefined && now - last < this.windowMs) return false;
    this.#sent.delete(key);
    this.#sent.set(key, now);
    if (this.#sent.size > CAPACITY) this.#sent.delete(this.#sent.keys().next().value as string);
    return true;
  }
}
