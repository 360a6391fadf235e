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

/**
 * controller-runtime's throttle: a token bucket per resource type. It builds
 * a REST client, and with it a rate limiter, per GroupVersionKind, so "QPS
 * 20" there means 20 a second for each kind an operator writes; the same
 * QPS here means the same (docs/adr/0011-throttle-per-resource.md).
 */
export class PerResourceThrottle {
  readonly #buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now?: () => number,
  ) {}

  take(path: string): Promise<void> {
    const resource = resourceOfPath(path);
    let bucket = this.#buckets.get(resource);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.qps, this.burst, this.now);
      this.#buckets.set(resource, bucket);
    }
    return bucket.take();
  }
}

/** "group/resource" of an apiserver path; subresources (status) share their resource's. */
export function resourceOfPath(path: string): string {
  const segments = (path.split('?')[0] ?? '').split('/').filter((s) => s !== '');
  const [root] = segments;
  const group = root === 'apis' ? (segments[1] ?? '') : '';
  let rest = segments.slice(root === 'apis' ? 3 : root === 'api' ? 2 : segments.length);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  return `${group}/${rest[0] ?? ''}`;
}
