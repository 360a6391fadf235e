// A command was given something it cannot work with (an unknown resource, a
// missing nats context, a bad value): the caller's fault, not the bus's. The
// command line reports it in one line and exits 2; anything else a command
// throws is a failure while running (exit 1).
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
  readonly code = 'KUBEBUS_USAGE';
}

export function isUsageError(error: unknown): error is UsageError {
  return error instanceof UsageError;
}
