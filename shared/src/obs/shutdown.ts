// Graceful shutdown, once: run the steps in order, flush the log, exit. main.ts
// owns the signals and calls the returned function from its handlers. A step
// that fails (the bus already gone, so there is nothing to drain) is one
// warning line, and the steps after it still run: what is left to close is
// closed.
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
    let failed = false;
    void steps
      .reduce<Promise<unknown>>(
        (previous, step) =>
          previous.then(step).catch((error: unknown) => {
            failed = true;
            const reason = error instanceof Error ? error.message : String(error);
            log.warn({ reason }, `a shutdown step did not finish cleanly: ${reason}`);
          }),
        Promise.resolve(),
      )
      .then(() => {
        log.flush();
        process.exit(failed ? 1 : 0);
      });
  };
}
