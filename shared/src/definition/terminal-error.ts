// A failure retrying cannot fix. Thrown from a reconcile (an operator's or the
// runtime's own), the object is not reconciled again until it changes: no
// retries, no dead letter. The one class for both; docs/errors.md has its code.
import { ErrorCodes, KubebusError } from '../errors/mod.js';

export class TerminalError extends KubebusError {
  override readonly name = 'TerminalError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCodes.Terminal, message, options);
  }
}

/**
 * A TerminalError, also one from another copy of kubebus (an operator that
 * installed its own next to the CLI that runs it): known by name and code.
 */
export function isTerminalError(error: unknown): error is TerminalError {
  if (error instanceof TerminalError) return true;
  return (
    error instanceof Error &&
    error.name === 'TerminalError' &&
    (error as { code?: unknown }).code === ErrorCodes.Terminal
  );
}
