// Exponential backoff with full jitter (AWS' "full jitter"): the delay for
// attempt n is uniform in [0, min(cap, base * 2^n)], so retries spread out.
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
}

export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.max(policy.baseMs, Math.round(ceiling * random()));
}
