// Durations in configuration: Go's notation ("500ms", "30s", "10m", "10h", "1h30m").
import { z } from 'zod';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

export function parseDuration(text: string): number | undefined {
  if (!/^(\d+(?:\.\d+)?(ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount = '0', unit = 'ms'] of text.matchAll(PART)) {
    total += Number(amount) * (UNIT_MS[unit] ?? 0);
  }
  return Math.round(total);
}

/** A zod schema for a duration variable, in milliseconds, with a default. */
export function durationMs(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: 'expected a duration like 500ms, 30s, 10m or 1h30m',
        });
        return z.NEVER;
      }
      return ms;
    });
}
