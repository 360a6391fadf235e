// Polling for tests that wait on other processes' effects.
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Until `count` (what the watched work has done: reconciles so far) has not
 * moved for `quietMs`: whatever comes next was caused by the test's next step.
 */
export async function untilQuiet(
  count: () => string | number,
  what: string,
  quietMs: number,
  timeoutMs = 60_000,
): Promise<void> {
  let seen = count();
  let since = Date.now();
  await waitFor(
    () => {
      const now = count();
      if (now !== seen) [seen, since] = [now, Date.now()];
      return Date.now() - since >= quietMs;
    },
    what,
    timeoutMs,
  );
}
