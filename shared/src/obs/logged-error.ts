// How an error reads in a log line. A transient failure — the apiserver
// throttling (429) or unavailable, a connection refused or reset, NATS not
// answering — logged at warn or below is a retry the caller expects to get
// past: it is one line (its class, HTTP status, code and message), never a
// stack, which reads as a crash and floods the logs while a dependency is
// down. At error and fatal the caller says it is a fault (a request
// dead-lettered, a partition stopped, a crash), whatever its cause: the full
// form stays, stack and causes, as does the level the caller chose.
import { pino, type LogFn, type Logger } from 'pino';
import { classifyFailure, FailureClasses } from '../errors/failure-class.js';
import { redactCredentials } from '../errors/public-text.js';

const WARN_LEVEL = 40; // pino's `warn`: above it, error and fatal keep the full form

/** How deep causes and inner errors are followed: a cycle must not make logging throw. */
const MAX_DEPTH = 8;

interface ErrorShape {
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly code?: unknown;
  readonly errors?: unknown;
  readonly cause?: unknown;
}

/** A failure retrying is expected to get past (failure-class.ts): a dependency's or an outside system's outage. */
export function isExpectedFailure(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const failureClass = classifyFailure(error);
  return failureClass === FailureClasses.Transient || failureClass === FailureClasses.External;
}

/** The HTTP status of the error or of its first cause that has one (a wrapped KubeApiError). */
function statusOf(error: Error): number | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < MAX_DEPTH && typeof e === 'object' && e !== null; depth++) {
    const { status, cause } = e as ErrorShape;
    if (typeof status === 'number') return status;
    e = cause;
  }
  return undefined;
}

/** The message with its causes', as pino writes it; or, where Node gives none (an AggregateError of one ECONNREFUSED per address), its errors'; or its code. */
function messageOf(error: Error, depth = 0): string {
  const message = withCauses(error);
  if (message !== '' || depth >= MAX_DEPTH) return message;
  const { errors, code } = error as ErrorShape;
  const reasons = Array.isArray(errors)
    ? [
        ...new Set(
          errors.map((inner) => (inner instanceof Error ? messageOf(inner, depth + 1) : '')),
        ),
      ]
    : [];
  const text = reasons.filter((reason) => reason !== '').join('; ');
  return text !== '' ? text : typeof code === 'string' ? code : '';
}

/** The message and its causes' after it, `a: b: c`, as pino writes them. */
function withCauses(error: Error): string {
  const parts = [error.message];
  let cause: unknown = error.cause;
  for (let depth = 0; cause instanceof Error && depth < MAX_DEPTH; depth++) {
    parts.push(cause.message);
    cause = cause.cause;
  }
  return parts.filter((part) => part !== '').join(': ');
}

/** The one-line forms made by the hook, which the serializer passes as they are. */
const oneLines = new WeakSet<object>();

/**
 * pino's `err` serializer: the hook's one-line form as it is, anything else as
 * pino has it; either way with no credentials in its text (an HTTP client's
 * error quotes the URL it failed on, and may carry its request's headers).
 */
export function serializeError(error: unknown): unknown {
  return typeof error === 'object' && error !== null && oneLines.has(error)
    ? error
    : withoutCredentials(pino.stdSerializers.err(error as Error), 0);
}

/** Every string in a serialized error with its credentials replaced (public-text.ts). */
function withoutCredentials(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactCredentials(value);
  if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => withoutCredentials(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([name, item]) => [
      name,
      /^(authorization|cookie|password|token|secret)$/i.test(name)
        ? '[redacted]'
        : withoutCredentials(item, depth + 1),
    ]),
  );
}

/** An expected failure (an outage) as one line: what a retry needs said, no stack. */
export function oneLine(error: Error): Record<string, unknown> {
  const { reason, code } = error as ErrorShape;
  const status = statusOf(error);
  const line = {
    type: error.name,
    // transient (the cluster's dependency) or external (the operator's outside system)
    class: classifyFailure(error),
    ...(status === undefined ? {} : { status }),
    ...(typeof reason === 'string' && reason !== '' ? { reason } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    message: redactCredentials(messageOf(error)),
  };
  oneLines.add(line);
  return line;
}

/**
 * pino's logMethod hook: at warn and below, a transient failure (as the
 * first argument or its `err`) is written as one line; the level is the
 * caller's, and error and fatal lines keep the stack.
 */
export function transientAsOneLine(
  this: Logger,
  args: Parameters<LogFn>,
  method: LogFn,
  level: number,
): void {
  method.apply(this, withoutUrlCredentials(level > WARN_LEVEL ? args : withOneLine(args)));
}

/**
 * The call's message with no credentials in a URL it quotes ("cannot reach
 * NATS at nats://alice:secret@…"): the serializer covers `err`, not the line.
 */
function withoutUrlCredentials(args: Parameters<LogFn>): Parameters<LogFn> {
  const index = typeof args[0] === 'string' ? 0 : 1;
  const message = (args as unknown[])[index];
  if (typeof message !== 'string' || !message.includes('@')) return args;
  const copy = [...(args as unknown[])];
  copy[index] = redactCredentials(message);
  return copy as Parameters<LogFn>;
}

/** The call's arguments with a transient failure in them as one line. */
function withOneLine(args: Parameters<LogFn>): Parameters<LogFn> {
  const [first, ...rest] = args as unknown[];
  if (first instanceof Error) {
    if (!isExpectedFailure(first)) return args;
    // pino takes an error's message as the line's when none is given
    const line = oneLine(first);
    return [{ err: line }, ...(rest.length === 0 ? [line['message']] : rest)] as Parameters<LogFn>;
  }
  if (typeof first !== 'object' || first === null) return args;
  const fields = first as Record<string, unknown>;
  if (!isExpectedFailure(fields['err'])) return args;
  return [{ ...fields, err: oneLine(fields['err']) }, ...rest] as Parameters<LogFn>;
}
