// The work loop: per-key serialization (one reconcile per object at a time,
// the latest waiting request replacing older ones), bounded concurrency, the
// outcome → action switch, metrics and the reconcile-id logger — transport-free.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../obs/logger.js';
import { continueTrace } from '../obs/trace.js';
import type { RuntimeMetrics } from './metrics.js';
import { keyString, type ObjectKey } from './object-key.js';
import { decide, resultLabel, type Action, type Outcome, type RetryPolicy } from './outcome.js';
import type { Reconciler } from './reconciler.js';
import type { WorkItem } from './work-item.js';

export interface ControllerOptions {
  readonly name: string;
  readonly maxConcurrent: number;
  readonly retry: RetryPolicy;
  /** how often waiting and running items report progress to their transport */
  readonly heartbeatMs: number;
  readonly metrics: RuntimeMetrics;
  readonly log: Logger;
  /** parks a request whose retry budget is spent; throwing makes it retry instead */
  readonly onDeadLetter: (item: WorkItem, error: unknown, attempts: number) => Promise<void>;
  /** told of a terminal error (e.g. to record an Event) */
  readonly onTerminal?: (item: WorkItem, error: unknown) => Promise<void>;
}

export class Controller {
  readonly #pending = new Map<string, WorkItem>();
  readonly #running = new Map<string, Promise<void>>();
  /** consecutive failures per object; the runtime, not the transport, counts attempts */
  readonly #failures = new Map<string, number>();
  readonly #roomWaiters: (() => void)[] = [];
  readonly #abort = new AbortController();
  readonly #heartbeat: NodeJS.Timeout;
  readonly #labels: { name: string; controller: string };

  constructor(
    private readonly reconciler: Reconciler,
    private readonly options: ControllerOptions,
  ) {
    this.#labels = { name: options.name, controller: options.name };
    options.metrics.maxConcurrent.set({ controller: options.name }, options.maxConcurrent);
    this.#heartbeat = setInterval(() => {
      for (const item of this.#pending.values()) item.inProgress();
    }, options.heartbeatMs);
    this.#heartbeat.unref();
  }

  get idle(): boolean {
    return this.#pending.size === 0 && this.#running.size === 0;
  }

  /** Accepts a request; waits while the controller holds as many as it can take. */
  async dispatch(item: WorkItem): Promise<void> {
    while (this.#pending.size + this.#running.size >= this.options.maxConcurrent * 4) {
      await new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
    }
    const id = keyString(item.key);
    this.options.metrics.adds.inc(this.#labels);
    const superseded = this.#pending.get(id);
    if (superseded !== undefined) {
      // Latest wins: the newer request stands for the same object.
      this.#pending.delete(id);
      superseded.ack();
      this.options.metrics.superseded.inc({ controller: this.options.name });
    }
    this.#pending.set(id, item);
    this.#updateDepth();
    this.#pump();
  }

  /** Stops taking work, aborts running reconciles' signals, waits for them. */
  async stop(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#heartbeat);
    await Promise.all([...this.#running.values()]);
    // Whatever still waits goes back to its transport for someone else.
    for (const item of this.#pending.values()) item.retry(0);
    this.#pending.clear();
  }

  /** Waits until the running reconciles of the given keys (or all) finish. */
  async drain(keys?: (key: ObjectKey) => boolean): Promise<void> {
    const waiting = [...this.#running.entries()]
      .filter(([id]) => keys === undefined || keys(parseKey(id)))
      .map(([, run]) => run);
    await Promise.all(waiting);
  }

  /** Hands back waiting requests for keys the caller no longer owns. */
  release(keys: (key: ObjectKey) => boolean): void {
    for (const [id, item] of this.#pending) {
      if (keys(item.key)) {
        this.#pending.delete(id);
        item.retry(0);
      }
    }
    this.#updateDepth();
  }

  #pump(): void {
    if (this.#abort.signal.aborted) return;
    for (const [id, item] of this.#pending) {
      if (this.#running.size >= this.options.maxConcurrent) break;
      if (this.#running.has(id)) continue;
      this.#pending.delete(id);
      const run = this.#run(id, item).finally(() => {
        this.#running.delete(id);
        this.options.metrics.activeWorkers.set(
          { controller: this.options.name },
          this.#running.size,
        );
        this.#roomWaiters.shift()?.();
        this.#pump();
      });
      this.#running.set(id, run);
    }
    this.options.metrics.activeWorkers.set({ controller: this.options.name }, this.#running.size);
    this.#updateDepth();
  }

  async #run(id: string, item: WorkItem): Promise<void> {
    const { metrics, name } = this.options;
    const attempt = (this.#failures.get(id) ?? 0) + 1;
    const reconcileId = randomUUID();
    const traceparent = continueTrace(item.traceparent);
    const log = this.options.log.child({
      controller: name,
      reconcileID: reconcileId,
      ...item.key,
      traceparent,
      ...(item.eventId === undefined ? {} : { eventId: item.eventId }),
    });
    metrics.queueDuration.observe(this.#labels, Math.max(0, Date.now() - item.enqueuedAt) / 1_000);
    const heartbeat = setInterval(() => {
      item.inProgress();
    }, this.options.heartbeatMs);
    log.debug({ attempt }, 'reconcile started');
    const started = performance.now();
    let outcome: Outcome;
    try {
      const result = await this.reconciler.reconcile(
        { key: item.key, ...(item.body === undefined ? {} : { body: item.body }) },
        { signal: this.#abort.signal, log, reconcileId, traceparent, attempt },
      );
      outcome = { ok: true, result };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      clearInterval(heartbeat);
    }
    const seconds = (performance.now() - started) / 1_000;
    log.debug({ ok: outcome.ok, seconds }, 'reconcile finished');
    metrics.reconcileTime.observe({ controller: name }, seconds);
    metrics.workDuration.observe(this.#labels, seconds);
    const action = decide(outcome, attempt, this.options.retry);
    await this.#carryOut(id, item, action, attempt, log);
    metrics.reconcileTotal.inc({ controller: name, result: resultLabel(action) });
  }

  async #carryOut(id: string, item: WorkItem, action: Action, attempt: number, log: Logger) {
    const { metrics, name } = this.options;
    switch (action.kind) {
      case 'ack':
        this.#failures.delete(id);
        item.ack();
        log.debug('reconciled');
        return;
      case 'retry':
        if (action.error !== undefined) {
          this.#failures.set(id, attempt);
          metrics.reconcileErrors.inc({ controller: name });
          metrics.retries.inc(this.#labels);
          log.error(
            { err: action.error, attempt, retryInMs: action.delayMs },
            'reconcile failed; will retry',
          );
        } else {
          this.#failures.delete(id);
          log.debug({ requeueAfterMs: action.delayMs }, 'reconciled; requeue requested');
        }
        item.retry(action.delayMs);
        return;
      case 'terminal':
        this.#failures.delete(id);
        metrics.reconcileErrors.inc({ controller: name });
        metrics.terminalErrors.inc({ controller: name });
        log.error(
          { err: action.error },
          'reconcile failed for good; not retried until the object changes',
        );
        await this.options.onTerminal?.(item, action.error).catch((error: unknown) => {
          log.warn({ err: error }, 'terminal-error hook failed');
        });
        item.terminate((action.error as Error).message);
        return;
      case 'dead-letter':
        metrics.reconcileErrors.inc({ controller: name });
        try {
          await this.options.onDeadLetter(item, action.error, attempt);
        } catch (error) {
          log.error({ err: error }, 'could not dead-letter the request; will retry');
          item.retry(this.options.retry.capMs);
          return;
        }
        this.#failures.delete(id);
        metrics.deadLetters.inc({ controller: name });
        log.error(
          { err: action.error, attempts: attempt },
          'retry budget spent: parked in the DLQ',
        );
        item.terminate('dead-lettered');
        return;
    }
  }

  #updateDepth(): void {
    this.options.metrics.depth.set(this.#labels, this.#pending.size);
  }
}

function parseKey(id: string): ObjectKey {
  const [group = '', resource = '', namespace = '', ...name] = id.split('/');
  return { group, resource, namespace, name: name.join('/') };
}
