// Waiting in tests for what other processes do: poll until a probe answers,
// with a bounded timeout whose message says what was awaited and what was
// seen last, so a failed test explains itself without a rerun.

const POLL_MS = 100;

/** Polls `probe` until it returns a value; a throw counts as "not yet". */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined>,
  what: () => string,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** How a predicate is named in a timeout: its own words when given, else its source. */
export function describePredicate(predicate: (...args: never[]) => unknown, what?: string) {
  if (what !== undefined) return what;
  const source = predicate.toString().replace(/\s+/g, ' ').trim();
  return source.length > 120 ? `${source.slice(0, 119)}…` : source;
}

/** An object as a timeout message shows it: its JSON, managedFields left out, cut short. */
export function describeSeen(object: unknown, limit = 1_500): string {
  if (object === undefined) return 'no such object';
  const json = JSON.stringify(object, (key, value: unknown) =>
    key === 'managedFields' ? undefined : value,
  );
  return json.length > limit ? `${json.slice(0, limit - 1)}…` : json;
}

/**
 * Reads an object until `predicate` holds for it (undefined: it does not
 * exist) and returns what satisfied it. A predicate that throws (an assert)
 * has not held yet; its last message is in the timeout, beside the object.
 */
export async function waitForObject<T>(
  read: () => Promise<T | undefined>,
  predicate: (object: T | undefined) => boolean,
  describe: { readonly target: string; readonly predicate: string },
  timeoutMs: number,
): Promise<T | undefined> {
  let last: { seen: T | undefined } | undefined;
  let lastError: string | undefined;
  let readError: string | undefined;
  const held = await waitUntil(
    async () => {
      let seen: T | undefined;
      try {
        seen = await read();
        readError = undefined;
      } catch (error) {
        readError = (error as Error).message.split('\n')[0];
        return undefined;
      }
      last = { seen };
      try {
        lastError = undefined;
        return predicate(seen) ? { seen } : undefined;
      } catch (error) {
        lastError = (error as Error).message.split('\n')[0];
        return undefined;
      }
    },
    () =>
      [
        `${describe.target} to satisfy ${describe.predicate}`,
        last === undefined ? 'never read it' : `last seen: ${describeSeen(last.seen)}`,
        ...(lastError === undefined ? [] : [`the predicate threw: ${lastError}`]),
        ...(readError === undefined ? [] : [`the last read failed: ${readError}`]),
      ].join('; '),
    timeoutMs,
  );
  return held.seen;
}
