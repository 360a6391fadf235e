// What went wrong, as the one line `kubebus: <what happened>; <what to do>`
// and its exit status: a usage or configuration error exits 2, anything that
// failed while running 1. Never a stack trace.
import { isUsageError, printable } from '@kubebus/cli/commands';
import { redactCredentials } from '@kubebus/shared/errors';
import { CannotConnectError } from './bus-session.js';
import { ExitCodes, type ExitCode } from './command-spec.js';

/** The hint for a failure that carries none. */
function whatToDo(message: string): string {
  if (/stream not found/i.test(message))
    return 'this NATS server holds no kubebus streams: is it the one the roles use? (kubebus topology apply creates them)';
  if (/permissions? violation|authorization/i.test(message))
    return 'the NATS user may not do this: use one allowed to (kubebus generate writes the users)';
  if (/insufficient (storage )?resources/i.test(message))
    return "the NATS account's JetStream storage (max_file) cannot hold every stream's size: give smaller sizes (--storage) or raise max_file (docs/security.md)";
  if (/timeout|timed out/i.test(message)) return 'the server did not answer in time: try again';
  return 'if it persists, see docs/errors.md';
}

export function failureOf(error: unknown, command: string): { line: string; exit: ExitCode } {
  // a URL in it keeps no credentials (a NATS URL with a user and password, a webhook's key)
  const message = printable(
    redactCredentials(error instanceof Error ? error.message : String(error)),
    500,
  );
  if (isUsageError(error)) return { line: message, exit: ExitCodes.usage };
  if (error instanceof CannotConnectError) return { line: message, exit: ExitCodes.problem };
  return {
    line: message.includes('; ')
      ? `${command} failed: ${message}`
      : `${command} failed: ${message}; ${whatToDo(message)}`,
    exit: ExitCodes.problem,
  };
}
