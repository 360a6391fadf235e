// Turns at reading and converting ConversionReviews, per peer and in all. A
// review past a cap waits for a turn, briefly, rather than being refused at
// once: the apiserver sends its conversions side by side (a burst of writes,
// each watcher of another version), and a refusal costs it a second (it
// retries after Retry-After) where a turn costs a millisecond. A peer's
// waiting reviews are bounded, and so is the wait: a sender holding its own
// turns (slow bodies) gets a 503 for the rest. Whoever waits most gives way:
// a turn freed goes to the waiting peer with the fewest in flight, and with
// every place taken a newcomer displaces the newest waiter of the peer with
// the most waiting, so senders filling the turns and the queue from several
// addresses still leave the apiserver its place.

export interface ReviewSlotLimits {
  /** reviews read and converted at once from one peer */
  readonly perPeer: number;
  /** reviews read and converted at once in all */
  readonly total: number;
  /** reviews of one peer waiting for a turn; more are refused at once */
  readonly waitingPerPeer: number;
  /** reviews waiting for a turn in all; past it the peer waiting most gives way */
  readonly waitingTotal: number;
  /** how long a review waits for a turn before it is refused */
  readonly waitMs: number;
}

interface Waiter {
  readonly peer: string;
  readonly settle: (taken: boolean) => void;
}

export type SlotRefusal = 'peer' | 'total';

export class ReviewSlots {
  readonly #limits: ReviewSlotLimits;
  #inFlight = 0;
  readonly #byPeer = new Map<string, number>();
  readonly #waiting: Waiter[] = [];
  readonly #waitingByPeer = new Map<string, number>();

  constructor(limits: ReviewSlotLimits) {
    this.#limits = limits;
  }

  /**
   * A turn for a review of `peer`: true once it has one (call `release`
   * after), or which cap refused it: at once, after the wait, when another
   * peer's review displaced it, or when `gone` (its connection closed) aborts
   * the wait.
   */
  async take(peer: string, gone?: AbortSignal): Promise<true | SlotRefusal> {
    // a review waits only while it does not fit (every release hands out what fits)
    if (this.#fits(peer)) {
      this.#hold(peer);
      return true;
    }
    if (gone?.aborted === true) return this.#refusal(peer);
    const waiting = this.#waitingByPeer.get(peer) ?? 0;
    if (waiting >= this.#limits.waitingPerPeer) return this.#refusal(peer);
    if (this.#waiting.length >= this.#limits.waitingTotal && !this.#displaceFor(waiting))
      return this.#refusal(peer);
    const taken = await new Promise<boolean>((resolve) => {
      const done = (taken: boolean) => {
        clearTimeout(timer);
        gone?.removeEventListener('abort', abandon);
        this.#unqueue(waiter);
        resolve(taken);
      };
      const abandon = () => {
        done(false);
      };
      const waiter: Waiter = { peer, settle: done };
      const timer = setTimeout(abandon, this.#limits.waitMs);
      gone?.addEventListener('abort', abandon, { once: true });
      this.#waiting.push(waiter);
      this.#count(this.#waitingByPeer, peer, 1);
    });
    // a turn granted was counted as held when it was handed out (#grantWaiters)
    return taken ? true : this.#refusal(peer);
  }

  release(peer: string): void {
    this.#inFlight--;
    this.#count(this.#byPeer, peer, -1);
    this.#grantWaiters();
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  #fits(peer: string): boolean {
    return (
      this.#inFlight < this.#limits.total && (this.#byPeer.get(peer) ?? 0) < this.#limits.perPeer
    );
  }

  #refusal(peer: string): SlotRefusal {
    return (this.#byPeer.get(peer) ?? 0) >= this.#limits.perPeer ? 'peer' : 'total';
  }

  #hold(peer: string): void {
    this.#inFlight++;
    this.#count(this.#byPeer, peer, 1);
  }

  /**
   * Every place taken: the newest waiter of the peer with the most waiting
   * gives way to one of a peer with fewer; false when the newcomer's own
   * peer waits most.
   */
  #displaceFor(waiting: number): boolean {
    let most: string | undefined;
    let count = waiting;
    for (const [other, waits] of this.#waitingByPeer)
      if (waits > count) {
        most = other;
        count = waits;
      }
    if (most === undefined) return false;
    const newest = this.#waiting.findLast((waiter) => waiter.peer === most);
    newest?.settle(false);
    return newest !== undefined;
  }

  /** Turns while there are some: each to the waiter that fits whose peer has the fewest in flight, the earliest of those. */
  #grantWaiters(): void {
    while (this.#inFlight < this.#limits.total) {
      let next: Waiter | undefined;
      let fewest = Infinity;
      for (const waiter of this.#waiting) {
        const held = this.#byPeer.get(waiter.peer) ?? 0;
        if (held < fewest && held < this.#limits.perPeer) {
          next = waiter;
          fewest = held;
        }
      }
      if (next === undefined) return;
      // taken from the queue and counted as held before anything else runs
      this.#unqueue(next);
      this.#hold(next.peer);
      next.settle(true);
    }
  }

  #unqueue(waiter: Waiter): void {
    const at = this.#waiting.indexOf(waiter);
    if (at < 0) return;
    this.#waiting.splice(at, 1);
    this.#count(this.#waitingByPeer, waiter.peer, -1);
  }

  #count(counts: Map<string, number>, peer: string, by: number): void {
    const next = (counts.get(peer) ?? 0) + by;
    if (next > 0) counts.set(peer, next);
    else counts.delete(peer);
  }
}
