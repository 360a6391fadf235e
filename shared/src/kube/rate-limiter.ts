// client-go's client-side throttle: a token bucket of `qps` tokens a second,
// holding at most `burst`. Callers wait for a token before each request.
export class TokenBucket {
  #tokens: number;
  #last: number;
  #queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = burst;
    this.#last = now();
  }

  /** Resolves when a token is available; callers are served in order. */
  take(): Promise<void> {
    const turn = this.#queue.then(() => this.#wait());
    this.#queue = turn;
    return turn;
  }

  async #wait(): Promise<void> {
    for (;;) {
      const now = this.now();
      this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1_000) * this.qps);
      this.#last = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, ((1 - this.#tokens) / this.qps) * 1_000));
    }
  }
}
