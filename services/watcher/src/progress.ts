// Which resourceVersion is safe to persist as the cursor: the newest one such
// that every change received before it has been durably published. Changes are
// published side by side and finish out of order; the cursor only moves over a
// prefix that is complete.
export class Progress {
  readonly #pending: { resourceVersion: string; done: boolean }[] = [];
  #committed: string | undefined;

  constructor(initial?: string) {
    this.#committed = initial;
  }

  /** The cursor to persist, if any. */
  get committed(): string | undefined {
    return this.#committed;
  }

  get pending(): number {
    return this.#pending.length;
  }

  /** Records a change at `resourceVersion`, done when `completion` settles. */
  track(resourceVersion: string, completion: Promise<unknown>): void {
    const entry = { resourceVersion, done: false };
    this.#pending.push(entry);
    const settle = () => {
      entry.done = true;
      this.#advance();
    };
    completion.then(settle, settle);
  }

  /** A point with nothing to publish (a bookmark, the end of a list). */
  mark(resourceVersion: string): void {
    this.#pending.push({ resourceVersion, done: true });
    this.#advance();
  }

  /** Forgets everything pending (a relist starts a new history). */
  reset(committed: string | undefined): void {
    this.#pending.length = 0;
    this.#committed = committed;
  }

  #advance(): void {
    while (this.#pending[0]?.done === true) {
      this.#committed = this.#pending.shift()?.resourceVersion;
    }
  }
}
