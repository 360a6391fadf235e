// The work loop: per-key serialization (one reconcile per object at a time,
// the latest waiting request replacing older ones), bounded concurrency, the
// outcome → action switch, metrics and the reconcile-id logger — transport-free.
import { randomUUID } from 'node:crypto';
import { isAbandonedReconcile } from './abandoned.js';
import { explainRefused } from '../errors/authorization-refusal.js';
import type { FailureClass } from '../errors/failure-class.js';
import { redactCredentials } from '../errors/public-text.js';
import { messageWithCause } from '../errors/first-cause.js';
import type { Logger } from '../obs/logger.js';
import { spans as traceparentsOnly, type Spans } from '../obs/spans.js';
import type { RuntimeMetrics } from './metrics.js';
import { keyString, type ObjectKey } from './object-key.js';
import {
  decide,
  resultLabel,
  type Action,
  type Attempts,
  type Outcome,
  type ResultLabel,
  type RetryPolicy,
} from './outcome.js';
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
  /** a span per reconcile, continuing the request's trace (traceparents only by default) */
  readonly spans?: Spans;
  /** whose fault a failure is (default: classifyFailure) */
  readonly classify?: (error: unknown) => FailureClass;
  /** parks a request whose retry budget is spent; throwing makes it retry instead */
  readonly onDeadLetter: (item: WorkItem, error: unknown, attempts: number) => Promise<void>;
  /** told of a terminal error (e.g. to record an Event) */
  readonly onTerminal?: (item: WorkItem, error: unknown) => Promise<void>;
  /** told what each reconcile came to (recorded for `kubebus history` and `status`) */
  readonly onOutcome?: (outcome: ReconcileOutcome) => void;
}

/** What one reconcile came to. */
export interface ReconcileOutcome {
  readonly key: WorkItem['key'];
  readonly result: ResultLabel;
  /** the reconciler did nothing, and says why */
  readonly skipped?: string;
  /** the resourceVersion the reconcile's write produced */
  readonly wrote?: string;
  readonly seconds: number;
  readonly attempt: number;
  readonly error?: string;
  readonly reconcileId: string;
  readonly traceparent: string;
  readonly eventId?: string;
  readonly cause?: string;
}

/** How long a partition given up, or a stopping process, lets its reconciles end on their own. */
export const DRAIN_ABORT_MS = 10_000;
/** How long it then waits for those whose signal it aborted. */
export const DRAIN_GIVE_UP_MS = 10_000;

/** Whether `promise` settles within `ms` (its rejection is its owner's to handle). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface Running {
  readonly item: WorkItem;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

export class Controller {
  readonly #spans: Spans;
  readonly #pending = new Map<string, WorkItem>();
  readonly #running = new Map<string, Running>();
  /** running reconciles whose worker went back to the pool (releaseWorker): their objects stay busy */
  readonly #released = new Set<string>();
  /** failures per object that count against its budget; the runtime, not the transport, counts */
  readonly #failures = new Map<string, number>();
  /** failures in a row of any kind, for the backoff */
  readonly #streak = new Map<string, number>();
  /** of the counted failures by object, those an outside system failed (outcome.ts: no budget spent) */
  readonly #external = new Map<string, number>();
  readonly #heartbeat: NodeJS.Timeout;
  readonly #labels: { name: string; controller: string };
  #stopped = false;

  constructor(
    private readonly reconciler: Reconciler,
    private readonly options: ControllerOptions,
  ) {
    this.#labels = { name: options.name, controller: options.name };
    this.#spans = options.spans ?? traceparentsOnly();
    options.metrics.maxConcurrent.set({ controller: options.name }, options.maxConcurrent);
    // Waiting requests keep their transport lease alive: a request is never
    // redelivered elsewhere only because it waited here for a worker.
    this.#heartbeat = setInterval(() => {
      for (const item of this.#pending.values()) item.inProgress();
    }, options.heartbeatMs);
    this.#heartbeat.unref();
  }

  get idle(): boolean {
    return this.#pending.size === 0 && this.#running.size === 0;
  }

  /**
   * Accepts a request at once (the transport bounds how many are outstanding,
   * e.g. JetStream's max_ack_pending); it waits here, kept alive, for a worker.
   */
  dispatch(item: WorkItem): void {
    if (this.#stopped) {
      item.retry(0);
      return;
    }
    const id = keyString(item.key);
    this.options.metrics.adds.inc(this.#labels);
    const superseded = this.#pending.get(id);
    if (superseded !== undefined && !sameRequest(superseded, item)) {
      // Latest wins: the newer request stands for the same object.
      superseded.ack();
      this.options.metrics.superseded.inc({ controller: this.options.name });
    }
    this.#pending.delete(id);
    this.#pending.set(id, item);
    this.#updateDepth();
    this.#pump();
  }

  /** Stops taking work, aborts running reconciles' signals, waits for them. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#heartbeat);
    for (const run of this.#running.values()) run.abort.abort();
    await Promise.all([...this.#running.values()].map((run) => run.done));
    // Whatever still waits goes back to its transport for someone else.
    for (const item of this.#pending.values()) item.retry(0);
    this.#pending.clear();
    this.#updateDepth();
  }

  /**
   * Waits until the running reconciles of the given keys (or all) finish — a
   * partition given up or a process stopping lets them end on their own, for
   * `abortAfterMs`. Those still running then have their signal aborted (a call
   * that takes it ends, and no write of theirs goes out: fenced), and are
   * waited for `giveUpAfterMs` more: a call that ignores the signal must not
   * hold a partition, or a pod's stop, for ever.
   */
  async drain(
    keys?: (key: ObjectKey) => boolean,
    { abortAfterMs = DRAIN_ABORT_MS, giveUpAfterMs = DRAIN_GIVE_UP_MS } = {},
  ): Promise<void> {
    const runs = [...this.#running.values()].filter(
      (run) => keys === undefined || keys(run.item.key),
    );
    const all = Promise.all(runs.map((run) => run.done));
    if (await settlesWithin(all, abortAfterMs)) return;
    const left = runs.filter((run) => [...this.#running.values()].includes(run));
    for (const run of left) run.abort.abort();
    this.options.log.warn(
      { controller: this.options.name, reconciles: left.length },
      `reconciles still running ${String(abortAfterMs / 1000)} s after their partition was given up: their signal aborted`,
    );
    if (await settlesWithin(all, giveUpAfterMs)) return;
    this.options.log.warn(
      { controller: this.options.name },
      `reconciles that did not end ${String(giveUpAfterMs / 1000)} s after their signal was aborted: left behind (their writes are fenced); pass ctx.signal to what a reconcile waits for`,
    );
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

  /**
   * Fencing: the caller is about to lose the keys (its lease is running out).
   * Waiting requests go back, running reconciles see their signal aborted, and
   * their outcome is not acted on as a failure.
   */
  revoke(keys: (key: ObjectKey) => boolean): void {
    this.release(keys);
    for (const run of this.#running.values()) if (keys(run.item.key)) run.abort.abort();
  }

  #pump(): void {
    if (this.#stopped) return;
    for (const [id, item] of this.#pending) {
      if (this.#busyWorkers() >= this.options.maxConcurrent) break;
      if (this.#running.has(id)) continue;
      // a suspect runs beside no other: a death is then blamed on one request
      if (isSuspect(item) && [...this.#running.values()].some((run) => isSuspect(run.item)))
        continue;
      this.#pending.delete(id);
      const abort = new AbortController();
      const done = this.#run(id, item, abort).finally(() => {
        this.#running.delete(id);
        this.#released.delete(id);
        // A copy of the same request that arrived meanwhile is settled already.
        const waiting = this.#pending.get(id);
        if (waiting !== undefined && sameRequest(waiting, item)) this.#pending.delete(id);
        this.#pump();
      });
      this.#running.set(id, { item, abort, done });
    }
    this.options.metrics.activeWorkers.set({ controller: this.options.name }, this.#busyWorkers());
    this.#updateDepth();
  }

  #busyWorkers(): number {
    return this.#running.size - this.#released.size;
  }

  /** The worker of a running reconcile goes back to the pool; its object stays busy. */
  #releaseWorker(id: string): void {
    if (this.#released.has(id)) return;
    this.#released.add(id);
    // not from inside the reconcile's call: #pump may be starting it right now
    queueMicrotask(() => {
      this.#pump();
    });
  }

  async #run(id: string, item: WorkItem, abort: AbortController): Promise<void> {
    const { signal } = abort;
    // before each write: a lease no longer trusted revokes the reconcile there and then
    const fence = () => {
      if (item.mayAct?.() === false) abort.abort();
      signal.throwIfAborted();
    };
    const { metrics, name } = this.options;
    const attempts: { attempt: number; streak: number; external: number } = {
      // a retry that waited apart is a new request: its failures came with it (and this
      // replica's count, kept by object, still stands for a change that came meanwhile)
      attempt: Math.max(this.#failures.get(id) ?? 0, item.failedBefore?.attempts ?? 0) + 1,
      streak: Math.max(this.#streak.get(id) ?? 0, item.failedBefore?.streak ?? 0),
      external: Math.max(this.#external.get(id) ?? 0, item.failedBefore?.external ?? 0),
    };
    const reconcileId = randomUUID();
    const span = this.#spans.start(`reconcile ${name}`, 'consumer', item.traceparent, {
      'kubebus.controller': name,
      'kubebus.attempt': attempts.attempt,
      'k8s.resource': item.key.resource,
      'k8s.namespace.name': item.key.namespace,
      'k8s.object.name': item.key.name,
      ...(item.eventId === undefined ? {} : { 'cloudevents.event_id': item.eventId }),
    });
    const { traceparent } = span;
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
    // revoked, stopped or drained too long: its request is no longer held for it (one
    // that never ends must not keep it from whoever takes the partition)
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(heartbeat);
      },
      { once: true },
    );
    if (item.started !== undefined)
      await item.started().catch((error: unknown) => {
        log.warn({ err: error }, 'could not record the start of a redelivered request');
      });
    log.debug({ attempt: attempts.attempt }, 'reconcile started');
    const started = performance.now();
    let outcome: Outcome;
    // a releaseWorker after the reconcile returned has no worker left to give back
    let returned = false;
    try {
      const result = await this.reconciler.reconcile(
        { key: item.key, ...(item.body === undefined ? {} : { body: item.body }) },
        {
          signal,
          fence,
          log,
          reconcileId,
          traceparent,
          attempt: attempts.attempt,
          failuresInARow: attempts.streak,
          releaseWorker: () => {
            if (!returned) this.#releaseWorker(id);
          },
        },
      );
      outcome = { ok: true, result };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      returned = true;
      clearInterval(heartbeat);
    }
    const seconds = (performance.now() - started) / 1_000;
    metrics.reconcileTime.observe({ controller: name }, seconds);
    metrics.workDuration.observe(this.#labels, seconds);
    const handBack =
      signal.aborted ||
      // failed after its lease lapsed (a pause, say): another replica may hold the
      // object now, and a dead letter, a Degraded status or an Event would be a zombie's
      (!outcome.ok && (item.mayAct?.() === false || isAbandonedReconcile(outcome.error)));
    if (handBack) {
      // Revoked, stopping, no longer trusted with its partition, or its process
      // gone (abandoned.ts): someone else takes the request; not the object's fault.
      log.debug({ ok: outcome.ok, seconds }, 'reconcile aborted; request handed back');
      span.end('aborted: the request was handed back');
      item.retry(0);
      return;
    }
    log.debug({ ok: outcome.ok, seconds }, 'reconcile finished');
    span.end(outcome.ok ? undefined : errorMessage(outcome.error).slice(0, 500));
    const action = decide(outcome, attempts, this.options.retry, this.options.classify);
    await this.#carryOut(id, item, action, attempts, log);
    const result = resultLabel(action);
    metrics.reconcileTotal.inc({ controller: name, result });
    this.options.onOutcome?.({
      key: item.key,
      result,
      ...(outcome.ok && outcome.result?.skipped !== undefined
        ? { skipped: outcome.result.skipped }
        : {}),
      ...(outcome.ok && outcome.result?.wrote !== undefined ? { wrote: outcome.result.wrote } : {}),
      seconds,
      attempt: attempts.attempt,
      ...('error' in action && action.error !== undefined
        ? { error: errorMessage(action.error).slice(0, 1_000) }
        : {}),
      reconcileId,
      traceparent,
      ...(item.eventId === undefined ? {} : { eventId: item.eventId }),
      ...(item.cause === undefined ? {} : { cause: item.cause }),
    });
  }

  async #carryOut(
    id: string,
    item: WorkItem,
    action: Action,
    attempts: Required<Attempts>,
    log: Logger,
  ) {
    const { metrics, name } = this.options;
    const { attempt } = attempts;
    if (action.kind !== 'retry' || action.error === undefined) this.#streak.delete(id);
    switch (action.kind) {
      case 'ack':
        this.#failures.delete(id);
        this.#external.delete(id);
        item.ack();
        log.debug('reconciled');
        return;
      case 'retry': {
        if (action.error === undefined) {
          this.#failures.delete(id);
          this.#external.delete(id);
          log.debug({ requeueAfterMs: action.delayMs }, 'reconciled; requeue requested');
        } else if (action.waiting === true) {
          // not a failure: the backoff does not grow, nothing is counted as an error
          log.info(
            { reason: errorMessage(action.error).slice(0, 300), retryInMs: action.delayMs },
            'waiting for something under way elsewhere; will look again',
          );
        } else {
          this.#streak.set(id, attempts.streak + 1);
          metrics.reconcileErrors.inc({ controller: name });
          metrics.retries.inc(this.#labels);
          if (action.forbidden === true) {
            metrics.transientRetries.inc({ controller: name, class: 'forbidden' });
            // an admin must act: at error, one line that says what to apply (no stack,
            // nor the dozens of rules an escalation refusal lists); an object refused
            // for hours says so at its 1st, 2nd, 4th, 8th… refusal, not at every retry
            const streak = attempts.streak + 1;
            log[(streak & (streak - 1)) === 0 ? 'error' : 'debug'](
              {
                refused: explainRefused(action.error),
                code: (action.error as { code?: unknown }).code,
                refusals: streak,
                retryInMs: action.delayMs,
              },
              "the operator's RBAC refused a request; will retry without limit until it is granted",
            );
          } else if (action.external === true) {
            this.#failures.set(id, attempt);
            this.#external.set(id, attempts.external + 1);
            metrics.transientRetries.inc({ controller: name, class: 'external' });
            // one line (logged-error.ts), at warn on the 1st, 2nd, 4th… try: an API down for
            // hours behind hundreds of objects does not flood the log
            const tries = attempts.external + 1;
            log[(tries & (tries - 1)) === 0 ? 'warn' : 'debug'](
              { err: action.error, attempt, tries, retryInMs: action.delayMs },
              "an outside system the operator's code calls is unreachable; will retry without limit",
            );
          } else if (action.transient === true) {
            metrics.transientRetries.inc({ controller: name, class: 'transient' });
            log.warn(
              { err: action.error, retryInMs: action.delayMs },
              'a dependency is unavailable; will retry without limit',
            );
          } else {
            this.#failures.set(id, attempt);
            log.error(
              {
                err: action.error,
                attempt,
                maxAttempts: action.budget ?? this.options.retry.maxAttempts,
                retryInMs: action.delayMs,
              },
              'reconcile failed; will retry',
            );
          }
        }
        if (item.later === undefined) {
          item.retry(action.delayMs);
          return;
        }
        // waits without its delivery, its failures carried in the request that follows
        item.later(
          action.delayMs,
          action.error === undefined
            ? undefined
            : {
                attempts: action.transient === true ? attempt - 1 : attempt,
                streak: action.waiting === true ? attempts.streak : attempts.streak + 1,
                ...externalOf(action.external === true ? attempts.external + 1 : attempts.external),
              },
        );
        return;
      }
      case 'terminal':
        this.#failures.delete(id);
        this.#external.delete(id);
        metrics.reconcileErrors.inc({ controller: name });
        metrics.terminalErrors.inc({ controller: name });
        // a terminal error is a verdict the reconciler chose (an invalid spec, say): one
        // line with its message, not a stack
        log.warn(
          {
            error: errorMessage(action.error),
          },
          'reconcile failed for good; not retried until the object changes',
        );
        await this.options.onTerminal?.(item, action.error).catch((error: unknown) => {
          log.warn({ err: error }, 'terminal-error hook failed');
        });
        item.terminate(errorMessage(action.error));
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
        this.#external.delete(id);
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

function isSuspect(item: WorkItem): boolean {
  return item.started !== undefined;
}

function sameRequest(a: WorkItem, b: WorkItem): boolean {
  return a.id !== undefined && a.id === b.id;
}

/** An error's message as records and logs may keep it: credentials it quotes replaced, before any cut. */
function errorMessage(error: unknown): string {
  // "fetch failed" alone says nothing: with its cause's reason (first-cause.ts)
  return redactCredentials(messageWithCause(error));
}

/** An outside system's failures a retry carries, when it has any (a mark without stays as it was). */
function externalOf(external: number): { external?: number } {
  return external > 0 ? { external } : {};
}
