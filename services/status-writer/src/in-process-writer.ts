// The status writer's door for a reconciler in the same process (ADR 0028):
// an intent judged and written at once by the same applier (the same field
// manager, no-op and staleness rules, metrics and memory of what it wrote) as
// one taken from the bus, and recorded for `kubebus history` and replay the
// same way. Whatever it cannot write now it declines, and the intent goes on
// the bus, where the partitioned writer retries or parks it.
import type {
  InProcessStatusWriter,
  OutcomeRecorder,
  StatusIntent,
  WriteGuard,
} from '@kubebus/shared/bus';
import { continueTrace, type Logger } from '@kubebus/shared/obs';
import { Slots } from '@kubebus/shared/runtime';
import { randomUUID } from 'node:crypto';
import type { Counter } from 'prom-client';
import type { StatusApplier } from './status-applier.js';

export function inProcessWriter(deps: {
  readonly applier: StatusApplier;
  readonly outcomes: OutcomeRecorder;
  /** by path: in_process, or declined (handed to the bus) */
  readonly handoffs: Counter<'path'>;
  readonly log: Logger;
  /** writes at once, as many as the status writer's own workers (KUBEBUS_MAX_CONCURRENT) */
  readonly maxConcurrent: number;
}): InProcessStatusWriter {
  const { applier, outcomes, handoffs } = deps;
  const slots = new Slots(deps.maxConcurrent);
  return {
    async write(intent: StatusIntent, guard?: WriteGuard): Promise<boolean> {
      const traceparent = continueTrace(intent.traceparent);
      const reconcileId = randomUUID();
      const log = deps.log.child({ ...intent.key, reconcileID: reconcileId, traceparent });
      // the wait for a slot counts: a write that cannot start in time goes to the bus
      const timeout = AbortSignal.timeout(IN_PROCESS_TIMEOUT_MS);
      const signal = guard === undefined ? timeout : AbortSignal.any([guard.signal, timeout]);
      // the reconcile's worker moves on; the reconcile (and its mark) waits for the write
      guard?.releaseWorker?.();
      let release: (() => void) | undefined;
      try {
        release = await slots.acquire(signal);
        const started = performance.now();
        const result = await applier.applyIntent(intent, {
          signal,
          log,
          ...(guard === undefined ? {} : { fence: guard.fence }),
        });
        // throttled (429): the bus' writer waits the Retry-After, not this reconcile
        if (result?.requeueAfterMs !== undefined) return declined(log, 'throttled');
        outcomes.record({
          key: intent.key,
          result: 'success',
          ...(result?.skipped === undefined ? {} : { skipped: result.skipped }),
          ...(result?.wrote === undefined ? {} : { wrote: result.wrote }),
          seconds: (performance.now() - started) / 1_000,
          attempt: 1,
          reconcileId,
          traceparent,
        });
        handoffs.inc({ path: 'in_process' });
        return true;
      } catch (error) {
        return declined(log, error);
      } finally {
        release?.();
      }
    },
  };

  function declined(log: Logger, why: unknown): false {
    handoffs.inc({ path: 'declined' });
    log.debug({ why: why instanceof Error ? why.message : why }, 'status intent handed to the bus');
    return false;
  }
}

/** A write here holds a reconcile (not its worker): one that waits or hangs goes to the bus' writer instead. */
const IN_PROCESS_TIMEOUT_MS = 10_000;
