// How far V8 lets the old generation grow past what the last full GC found
// live. V8's own policy grows it by up to 4× when collecting is cheap next to
// the work, so a process holding 50 MB peaks at two or three times that under
// load and keeps the pages. An operator runs beside others under a memory
// limit: a fixed, smaller factor keeps the peak near what is live, for a
// little more time in GC (ADR 0026, docs/benchmarks.md). Parsed once by
// `kubebus run`; 0 leaves V8's policy in place.
import { setFlagsFromString } from 'node:v8';
import { z } from 'zod';

export const HeapEnv = z.object({
  /** the old generation may grow to (100 + this) % of the live heap before the next full GC */
  KUBEBUS_HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(300).default(50),
});

const ON_COMMAND_LINE = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets V8's heap growing factor for the rest of the process' life: V8 reads
 * it at every full GC, so once at start is enough. A `--heap-growing-percent`
 * on node's own command line wins. Returns the flag set, if any.
 */
export function applyHeapGrowth(
  percent: number,
  execArgv: readonly string[],
  setFlags: (flags: string) => void = setFlagsFromString,
): string | undefined {
  if (percent === 0 || execArgv.some((flag) => ON_COMMAND_LINE.test(flag))) return undefined;
  const flag = `--heap-growing-percent=${String(percent)}`;
  setFlags(flag);
  return flag;
}
