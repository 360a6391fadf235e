// How an error reads in a log line. A transient failure — the apiserver
// throttling (429) or unavailable, a connection refused or reset, NATS not
// answering — is expected and retried: it is logged as one line (its class,
// HTTP status, code and message) at warn at most, never with a stack, which
// reads as a crash and floods the logs while a dependency is down. Every
// other error keeps pino's full form, stack and causes.
import { pino, type LogFn, type Logger } from 'pino';
import { classifyFailure, FailureClasses } from '../errors/failure-class.js';

const ERROR_LEVEL = 50; // pino's `error`; `fatal` (60) is left as it is

interface ErrorShape {
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly code?: unknown;
  readonly errors?: unknown;
  readonly cause?: unknown;
}

/** A failure retrying is expected to get past (failure-class.ts). */
export function isExpectedFailure(error: unknown): error is Error {
  return error instanceof Error && classifyFailure(error) === FailureClasses.Transient;
}

/** The HTTP status of the error or of its first cause that has one (a wrapped KubeApiError). */
function statusOf(error: Error): number | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 8 && typeof e === 'object' && e !== null; depth++) {
    const { status, cause } = e as ErrorShape;
    if (typeof status === 'number') return status;
    e = cause;
  }
  return undefined;
}

/** The message with its causes', as pino writes it; or, where Node gives none (an AggregateError of one ECONNREFUSED per address), its errors'; or its code. */
function messageOf(error: Error): string {
  const { message } = pino.stdSerializers.err(error);
  if (message !== '') return message;
  const { errors, code } = error as ErrorShape;
  const reasons = Array.isArray(errors)
    ? [...new Set(errors.map((inner) => (inner instanceof Error ? messageOf(inner) : '')))]
    : [];
  const text = reasons.filter((reason) => reason !== '').join('; ');
  return text !== '' ? text : typeof code === 'string' ? code : '';
}

/** pino's `err` serializer: a transient failure as one line, anything else as pino has it. */
export function loggedError(error: unknown): unknown {
  if (!isExpectedFailure(error)) return pino.stdSerializers.err(error as Error);
  const { reason, code } = error as ErrorShape;
  const status = statusOf(error);
  return {
    type: error.name,
    class: FailureClasses.Transient,
    ...(status === undefined ? {} : { status }),
    ...(typeof reason === 'string' && reason !== '' ? { reason } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    message: messageOf(error),
  };
}

/** The error a log call carries: its first argument, or that argument's `err`. */
function errorOf(first: unknown): unknown {
  if (first instanceof Error) return first;
  return typeof first === 'object' && first !== null ? (first as { err?: unknown }).err : undefined;
}

/**
 * pino's logMethod hook: a transient failure logged at error goes out at warn
 * (it is waited out, not a fault to page anyone about); fatal stays fatal.
 */
export function transientAtWarn(
  this: Logger,
  args: Parameters<LogFn>,
  method: LogFn,
  level: number,
): void {
  if (level === ERROR_LEVEL && isExpectedFailure(errorOf(args[0]))) {
    this.warn(...args);
    return;
  }
  method.apply(this, args);
}
