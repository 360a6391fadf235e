// Log lines for a person at a terminal (kubebus dev): time, level, role,
// message, then the fields that matter — instead of one JSON object per line.
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
  const rest = Object.entries(entry)
    .filter(
      ([key]) =>
        !HIDDEN.has(key) &&
        !(where !== '' && ['namespace', 'name', 'group', 'resource'].includes(key)),
    )
    .map(([key, value]) => `${key}=${field(value)}`);
  const tag = level.toUpperCase().padEnd(5);
  const shown = colour ? `\u001b[${COLOURS[level] ?? '0'}m${tag}\u001b[0m` : tag;
  return [
    time,
    shown,
    role.padEnd(13),
    where,
    typeof entry['msg'] === 'string' ? entry['msg'] : '',
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
