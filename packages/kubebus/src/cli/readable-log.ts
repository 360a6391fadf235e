// Log lines for a person at a terminal (kubebus dev): time, level, role,
// message, then the fields that matter — instead of one JSON object per line.
// An error shows as its message, never its stack (whose frames name kubebus'
// files, not the reader's), and a retried reconcile as one line:
// `retry 3/10 in 2.0s: <reason>`.
import { formatAge } from '@kubebus/cli/commands';

const HIDDEN = new Set([
  'level',
  'time',
  'msg',
  'service',
  'role',
  'pid',
  'hostname',
  'traceparent',
  'reconcileID',
  'eventId',
]);
const COLOURS: Record<string, string> = {
  error: '31',
  warn: '33',
  info: '32',
  debug: '90',
  trace: '90',
};

function field(value: unknown): string {
  if (typeof value === 'string') return /\s/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/**
 * pino's serialized error as one line: its message; or, for an AggregateError
 * with none (Node's ECONNREFUSED from `localhost`, one error per address
 * tried), its errors' messages; or its code.
 */
function errorText(value: unknown): string {
  const error = record(value);
  if (error === undefined) return oneLine(String(value));
  const message = typeof error['message'] === 'string' ? oneLine(error['message']) : '';
  if (message !== '') return message;
  const aggregated: unknown[] = Array.isArray(error['aggregateErrors'])
    ? error['aggregateErrors']
    : [];
  const reasons = [...new Set(aggregated.map(errorText).filter((reason) => reason !== ''))];
  if (reasons.length > 0) return reasons.join('; ');
  return typeof error['code'] === 'string' ? error['code'] : '';
}

/**
 * A log entry that schedules a retry after an error, on one line:
 * `retry 3/10 in 2.0s: <reason>` within a budget; without one (a dependency
 * is down) its message first, which says it retries without limit:
 * `a dependency is unavailable; will retry without limit; next in 500ms: <reason>`.
 */
function retryText(entry: Record<string, unknown>): string | undefined {
  const { err, attempt, maxAttempts, retryInMs, msg } = entry;
  if (err === undefined || typeof retryInMs !== 'number') return undefined;
  const reason = errorText(err) || 'no reason given';
  if (typeof maxAttempts !== 'number') {
    const count = typeof attempt === 'number' ? ` (attempt ${attempt})` : '';
    const said = typeof msg === 'string' && msg !== '' ? msg : 'will retry';
    return `${said}; next in ${formatAge(retryInMs)}${count}: ${reason}`;
  }
  const count = typeof attempt === 'number' ? ` ${attempt}/${maxAttempts}` : '';
  return `retry${count} in ${formatAge(retryInMs)}: ${reason}`;
}

/** The first value of a string field named `key` in a JSON line, or undefined. */
function firstString(json: string, key: string): string | undefined {
  const match = new RegExp(`"${key}":("(?:[^"\\\\]|\\\\.)*")`).exec(json);
  if (match?.[1] === undefined) return undefined;
  try {
    return JSON.parse(match[1]) as string;
  } catch {
    return undefined;
  }
}

export function readableLine(json: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = typeof entry['level'] === 'string' ? entry['level'] : 'info';
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 23) : '';
  const role = typeof entry['role'] === 'string' ? entry['role'] : '';
  // the object's, bound first; a field of the same name a call adds comes later
  // in the line and is what JSON.parse keeps: shown among the fields instead
  const object = { namespace: firstString(json, 'namespace'), name: firstString(json, 'name') };
  const where =
    object.namespace !== undefined && object.name !== undefined
      ? `${object.namespace === '' ? '' : `${object.namespace}/`}${object.name}`
      : '';
  const retry = retryText(entry);
  const rest =
    retry !== undefined
      ? []
      : Object.entries(entry)
          .filter(
            ([key]) =>
              !HIDDEN.has(key) &&
              !(
                where !== '' &&
                ['namespace', 'name', 'group', 'resource'].includes(key) &&
                (key === 'namespace' || key === 'name' ? entry[key] === object[key] : true)
              ),
          )
          .map(([key, value]) =>
            key === 'err' ? `error=${field(errorText(value))}` : `${key}=${field(value)}`,
          );
  const tag = level.toUpperCase().padEnd(5);
  const shown = colour ? `\u001b[${COLOURS[level] ?? '0'}m${tag}\u001b[0m` : tag;
  return [
    time,
    shown,
    role.padEnd(13),
    where,
    retry ?? (typeof entry['msg'] === 'string' ? entry['msg'] : ''),
    ...rest,
  ]
    .filter((part) => part !== '')
    .join(' ');
}

/** A pino destination that writes readable lines to a stream. */
export function readableDestination(stream: NodeJS.WriteStream) {
  const colour = stream.isTTY;
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n'))
        if (line !== '') stream.write(`${readableLine(line, colour)}\n`);
    },
  };
}
