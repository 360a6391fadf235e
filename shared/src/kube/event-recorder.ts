// Records Kubernetes Events in the background, as client-go's recorder and
// kopf do (ADR 0029): the reconcile that records one goes on at once instead
// of waiting a request's time for a diagnostic, and an Event the apiserver
// throttles or refuses (an EventRateLimit admission answers 429, a role may
// lack events.create) never fails the reconcile or repeats its work. Each
// Event keeps the time it was recorded. A transient failure is retried a few
// times with backoff; what is refused, retried out, or finds too many Events
// in flight is dropped, logged and counted. Stopping waits, bounded, for the
// Events in flight.
import { setTimeout as sleep } from 'node:timers/promises';
import { classifyFailure, type FailureClass } from '../errors/failure-class.js';
import type { KubeObject } from '../events/kube-object.js';
import type { Logger } from '../obs/logger.js';
import { backoffDelay, type BackoffPolicy } from '../runtime/backoff.js';
import type { EventInput } from './apply.js';

/** Sends one Event about `object`, stamped with the time it was recorded. */
export type PostEvent = (object: KubeObject, input: EventInput, time: Date) => Promise<void>;

export const EventDropReasons = ['in_flight_limit', 'refused', 'retries_spent', 'stopped'] as const;
export type EventDropReason = (typeof EventDropReasons)[number];

export interface EventRecorderOptions {
  readonly log: Logger;
  /** Events being sent at once; one more is dropped (a flood of Events must not grow the heap) */
  readonly maxInFlight?: number;
  /** sends of one Event, the first included, while the apiserver answers transiently */
  readonly maxAttempts?: number;
  readonly retry?: BackoffPolicy;
  readonly onDropped?: (reason: EventDropReason) => void;
  readonly classify?: (error: unknown) => FailureClass;
}

const DEFAULTS = {
  maxInFlight: 1024,
  maxAttempts: 5,
  retry: { baseMs: 500, capMs: 10_000 },
} as const;

export class EventRecorder {
  readonly #inFlight = new Set<Promise<void>>();
  /** aborts the retries' pauses once stopping */
  readonly #stopping = new AbortController();
  readonly #maxInFlight: number;
  readonly #maxAttempts: number;
  readonly #retry: BackoffPolicy;
  readonly #classify: (error: unknown) => FailureClass;

  constructor(
    private readonly post: PostEvent,
    private readonly options: EventRecorderOptions,
  ) {
    this.#maxInFlight = options.maxInFlight ?? DEFAULTS.maxInFlight;
    this.#maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
    this.#retry = options.retry ?? DEFAULTS.retry;
    this.#classify = options.classify ?? classifyFailure;
  }

  /** Events still being sent. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Starts sending an Event about `object` and returns at once. */
  record(object: KubeObject, input: EventInput): void {
    if (this.#stopping.signal.aborted) {
      this.#drop('stopped', object, input);
      return;
    }
    if (this.#inFlight.size >= this.#maxInFlight) {
      this.#drop('in_flight_limit', object, input);
      return;
    }
    const sending = this.#send(object, input, new Date()).finally(() => {
      this.#inFlight.delete(sending);
    });
    this.#inFlight.add(sending);
  }

  /**
   * Takes no more Events and waits up to `timeoutMs` for those in flight
   * (a retry's pause is cut short: each gets one more try at most). Returns
   * how many were still unsent.
   */
  async stop(timeoutMs: number): Promise<number> {
    this.#stopping.abort();
    if (this.#inFlight.size === 0) return 0;
    const deadline = new AbortController();
    await Promise.race([
      Promise.all([...this.#inFlight]),
      sleep(timeoutMs, undefined, { signal: deadline.signal }).catch(() => undefined),
    ]);
    deadline.abort();
    return this.#inFlight.size;
  }

  async #send(object: KubeObject, input: EventInput, time: Date): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.post(object, input, time);
        return;
      } catch (error) {
        const transient = this.#classify(error) === 'transient';
        if (!transient || attempt >= this.#maxAttempts || this.#stopping.signal.aborted) {
          this.#drop(transient ? 'retries_spent' : 'refused', object, input, error);
          return;
        }
        await sleep(backoffDelay(this.#retry, attempt - 1), undefined, {
          signal: this.#stopping.signal,
        }).catch(() => undefined);
      }
    }
  }

  #drop(reason: EventDropReason, object: KubeObject, input: EventInput, error?: unknown): void {
    this.options.onDropped?.(reason);
    this.options.log.warn(
      {
        ...(error === undefined ? {} : { err: error }),
        dropped: reason,
        eventReason: input.reason,
        namespace: object.metadata.namespace ?? '',
        name: object.metadata.name,
      },
      'an Event was not recorded',
    );
  }
}
