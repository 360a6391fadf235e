// A failure retrying cannot fix. Thrown from reconcile, the object is not
// reconciled again until it changes (no retries, no dead letter).
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  /** recognised by the runtime across package copies */
  readonly kubebusTerminal = true;
}
