// Log lines for a person at a terminal (kubebus dev): time, level, role,
// message, then the fields that matter — instead of one JSON object per line.
// An error shows as its message, never its stack (whose frames name kubebus'
// files, not the reader's), and a retried reconcile as one line:
// `retry 3/10 in 2s: <message>`.
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

/** pino's serialized error ({ type, message, stack }) as its message on one line. */
function errorText(value: unknown): string {
  const message =
    typeof value === 'object' && value !== null && 'message' in value
      ? String(value.message)
      : String(value);
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

/** 250ms, 2s, 1.5s, 2m30s */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10}s`;
  const seconds = Math.round(ms / 1_000);
  return `${Math.floor(seconds / 60)}m${seconds % 60 === 0 ? '' : `${seconds % 60}s`}`;
}

/** `retry 3/10 in 2s: <message>` for a log entry that schedules a retry after an error. */
function retryText(entry: Record<string, unknown>): string | undefined {
  const { err, attempt, maxAttempts, retryInMs } = entry;
  if (err === undefined || typeof retryInMs !== 'number') return undefined;
  const count =
    typeof attempt !== 'number'
      ? ''
      : typeof maxAttempts === 'number'
        ? ` ${attempt}/${maxAttempts}`
        : ` ${attempt}`;
  return `retry${count} in ${duration(retryInMs)}: ${errorText(err)}`;
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
  const where =
    typeof entry['namespace'] === 'string' && typeof entry['name'] === 'string'
      ? `${entry['namespace'] === '' ? '' : `${entry['namespace']}/`}${entry['name']}`
      : '';
  const retry = retryText(entry);
  const rest =
    retry !== undefined
      ? []
      : Object.entries(entry)
          .filter(
            ([key]) =>
              !HIDDEN.has(key) &&
              !(where !== '' && ['namespace', 'name', 'group', 'resource'].includes(key)),
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
