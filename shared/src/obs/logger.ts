// JSON logs with pino. One logger per process, made in main.ts and passed down;
// secrets are redacted even if someone logs an object that holds them, and a
// transient failure logged as a retry (warn) is one line, not a stack
// (logged-error.ts).
import { pino, type Logger } from 'pino';
import { serializeError, transientAsOneLine } from './logged-error.js';

export type { Logger } from 'pino';

/** Paths pino censors wherever a log call puts them. */
export const REDACTED_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  'stringData',
  '*.stringData',
  '*.*.stringData',
  'object.data',
  'event.data.data',
  'event.data.stringData',
  'secret',
  '*.secret',
];

export interface LoggerOptions {
  readonly service: string;
  readonly level?: string;
  /** Where logs go; stdout by default (tests pass a stream to read them). */
  readonly destination?: pino.DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      hooks: { logMethod: transientAsOneLine },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
