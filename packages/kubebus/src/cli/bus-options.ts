// The bus commands' options, from text to the typed values @kubebus/cli
// takes; a bad value is a usage error saying what was expected.
import {
  OUTPUT_FORMATS,
  type LetterFilter,
  type ObjectRef,
  type OutputFormat,
} from '@kubebus/cli/commands';
import { defaultStorageLimits, parseStorageSizes, type StorageLimits } from '@kubebus/shared/bus';
import { stringOption, usageError, type CommandLine } from './commands.js';

/** -o table|json|yaml, or --json. */
export function outputFormatOf(line: CommandLine): OutputFormat {
  if (line.values['json'] === true) return 'json';
  const text = stringOption(line, 'output') ?? 'table';
  return (
    OUTPUT_FORMATS.find((format) => format === text) ??
    usageError(`-o "${text}" is not an output format; use -o ${OUTPUT_FORMATS.join(', -o ')}`)
  );
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** --since: a duration back from `now` (30m, 2h, 7d) or a time (ISO 8601). */
export function sinceOf(text: string, now: number): Date {
  const ago = /^(\d+)(s|m|h|d)$/.exec(text);
  if (ago !== null) return new Date(now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS]);
  const time = new Date(text);
  return Number.isNaN(time.getTime())
    ? usageError(
        `--since "${text}" is neither a duration nor a time; give one such as 30m, 2h, 7d or 2026-11-30T12:00:00Z`,
      )
    : time;
}

function positiveOf(line: CommandLine, name: string): number | undefined {
  const text = stringOption(line, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isInteger(n) && n > 0
    ? n
    : usageError(`--${name} "${text}" is not a positive whole number; give one such as 10`);
}

/** --origin, --code, --since, --after, --limit. */
export function letterFilterOf(line: CommandLine, now = Date.now()): LetterFilter {
  const origin = stringOption(line, 'origin');
  const code = stringOption(line, 'code');
  const since = stringOption(line, 'since');
  const after = positiveOf(line, 'after');
  const limit = positiveOf(line, 'limit');
  return {
    ...(origin === undefined ? {} : { origin }),
    ...(code === undefined ? {} : { code }),
    ...(since === undefined ? {} : { since: sinceOf(since, now) }),
    ...(after === undefined ? {} : { after }),
    ...(limit === undefined ? {} : { limit }),
  };
}

/** A dead letter's sequence number. */
export function sequenceOf(text: string): number {
  const seq = Number(text);
  return Number.isInteger(seq) && seq > 0
    ? seq
    : usageError(
        `"${text}" is not a dead letter's sequence number; kubebus dlq list shows them (#12 is 12)`,
      );
}

/** <resource> <namespace/name | name>, the first two arguments. */
export function objectRefOf(line: CommandLine): ObjectRef {
  const [resource = '', where = ''] = line.positionals;
  const slash = where.indexOf('/');
  return slash < 0
    ? { resource, name: where }
    : { resource, namespace: where.slice(0, slash), name: where.slice(slash + 1) };
}

/** --replicas 1|3|5 (default 1). */
export function replicasOf(line: CommandLine): 1 | 3 | 5 {
  const text = stringOption(line, 'replicas') ?? '1';
  const replicas = ([1, 3, 5] as const).find((n) => String(n) === text);
  return replicas ?? usageError(`--replicas "${text}" is not 1, 3 or 5; give one of those`);
}

/**
 * --storage events=4GiB,work=512MiB,…: the sizes it names, set exactly; every
 * other size a stream already has is kept (a new stream gets the default).
 */
export function storageOf(line: CommandLine): {
  limits: StorageLimits;
  sized: ReadonlySet<keyof StorageLimits>;
} {
  let sizes: Partial<StorageLimits>;
  try {
    sizes = parseStorageSizes(stringOption(line, 'storage') ?? '');
  } catch (error) {
    return usageError(`--storage: ${(error as Error).message}`);
  }
  if (sizes.performedBytes !== undefined && line.positionals.length === 0)
    usageError('--storage performed=… sizes an operator’s bucket: name the operator module');
  return {
    limits: { ...defaultStorageLimits, ...sizes },
    sized: new Set(Object.keys(sizes) as (keyof StorageLimits)[]),
  };
}
