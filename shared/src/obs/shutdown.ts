// Graceful shutdown, once: run the steps in order, flush the log, exit. main.ts
// owns the signals and calls the returned function from its handlers.
import type { Logger } from './logger.js';

export function gracefulShutdown(
  log: Logger,
  steps: readonly (() => Promise<unknown>)[],
): (signal: string) => void {
  let stopping = false;
  return (signal) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    steps
      .reduce<Promise<unknown>>((previous, step) => previous.then(step), Promise.resolve())
      .then(
        () => {
          log.flush();
          process.exit(0);
        },
        (error: unknown) => {
          log.error({ err: error }, 'unclean shutdown');
          log.flush();
          process.exit(1);
        },
      );
  };
}
