// Records Kubernetes Events in the background, as client-go's recorder and
// kopf do (ADR 0029): the reconcile that records one goes on at once instead
// of waiting a request's time for a diagnostic, and an Event the apiserver
// throttles or refuses (an EventRateLimit admission answers 429, a role may
// lack events.create) never fails the reconcile or repeats its work. Each
// Event keeps its name and the time it was recorded across retries, so a
// retry of a POST that landed is not a second Event. A transient failure is
// retried a few times with backoff — a second retry loop beside the
// controller's, on purpose: the reconcile is done by then. Before each try the
// caller's fence is asked again: a reconcile whose partition moved sends no
// more. What is dropped is logged and counted. Stopping waits, bounded.
import { setTimeout as sleep } from 'node:timers/promises';
import { classifyFailure, type FailureClass } from '../errors/failure-class.js';
import type { KubeObject } from '../events/kube-object.js';
import type { Logger } from '../obs/logger.js';
import { backoffDelay, type BackoffPolicy } from '../runtime/backoff.js';
import { isKubeApiError } from './api-error.js';
import { isAlreadyRecorded, newEventName, type EventInput, type EventSend } from './apply.js';

/** Sends one Event about `regarding`, with its name, time and a signal aborted at the stop's deadline. */
export type PostEvent = (
  regarding: KubeObject,
  input: EventInput,
  send: Required<EventSend>,
) => Promise<void>;

export const EventDropReasons = [
  /** the apiserver refused it (403, 422, …): retrying will not help */
  'refused',
  /** its namespace is gone or being deleted: nothing left to describe */
  'namespace_gone',
  /** transient failures (429, 5xx, no answer) until its tries were spent */
  'retries_spent',
  /** more Events unanswered at once than allowed */
  'in_flight_limit',
  /** the reconcile that recorded it lost its partition before a retry */
  'fenced',
  /** recorded while stopping, or still unsent at the stop's deadline */
  'stopped',
  /** anything else: a bug, reported with its error */
  'failed',
] as const;
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

/** Refuses (throws) when the recording reconcile may no longer write. */
export type EventFence = () => void;

export class EventRecorder {
  readonly #inFlight = new Set<Promise<void>>();
  /** aborts the retries' pauses once stopping */
  readonly #stopping = new AbortController();
  /** aborts the requests still open at the stop's deadline */
  readonly #deadline = new AbortController();
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

  /**
   * Starts sending an Event about `object` and returns at once. With `name`
   * (onceEventName), an Event already there under it is this one: recorded.
   */
  record(object: KubeObject, input: EventInput, fence?: EventFence, name?: string): void {
    const regarding = referenceOf(object);
    if (this.#stopping.signal.aborted) {
      this.#drop('stopped', regarding, input);
      return;
    }
    if (this.#inFlight.size >= this.#maxInFlight) {
      this.#drop('in_flight_limit', regarding, input);
      return;
    }
    const send = {
      name: name ?? newEventName(regarding),
      time: new Date(),
      signal: this.#deadline.signal,
    };
    const sending = this.#send(regarding, input, send, fence, name !== undefined).finally(() => {
      this.#inFlight.delete(sending);
    });
    this.#inFlight.add(sending);
  }

  /**
   * Takes no more Events and waits up to `timeoutMs` for those in flight (a
   * retry's pause is cut short: each gets one more try at most); then aborts
   * what is still open, counted as stopped. Returns how many were unsent.
   */
  async stop(timeoutMs: number): Promise<number> {
    this.#stopping.abort();
    if (this.#inFlight.size > 0) {
      const timer = new AbortController();
      await Promise.race([
        Promise.allSettled([...this.#inFlight]),
        sleep(timeoutMs, undefined, { signal: timer.signal }).catch(() => undefined),
      ]);
      timer.abort();
    }
    const unsent = this.#inFlight.size;
    this.#deadline.abort();
    return unsent;
  }

  async #send(
    regarding: KubeObject,
    input: EventInput,
    send: Required<EventSend>,
    fence: EventFence | undefined,
    /** named once: another send (a retry, another reconcile) may have recorded it */
    once: boolean,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        fence?.();
      } catch (error) {
        this.#drop('fenced', regarding, input, error);
        return;
      }
      const lastTry = this.#stopping.signal.aborted;
      try {
        await this.post(regarding, input, send);
        return;
      } catch (error) {
        // a retry whose first POST did land, or an Event recorded once already: there, under its name
        if ((attempt > 1 || once) && isAlreadyRecorded(error)) return;
        const reason =
          lastTry || this.#deadline.signal.aborted ? 'stopped' : this.#dropReason(error, attempt);
        if (reason !== undefined) {
          this.#drop(reason, regarding, input, error);
          return;
        }
        await sleep(backoffDelay(this.#retry, attempt - 1), undefined, {
          signal: this.#stopping.signal,
        }).catch(() => undefined);
      }
    }
  }

  /** Why a failed send ends the Event, or undefined to try again (at once when stopping). */
  #dropReason(error: unknown, attempt: number): EventDropReason | undefined {
    if (namespaceGone(error)) return 'namespace_gone';
    let failure: FailureClass;
    try {
      failure = this.#classify(error);
    } catch {
      failure = 'unknown';
    }
    // the recorder's own RBAC refusing (no `create events`) as well: an Event is not
    // worth retrying until an admin acts; dropped, logged and counted as before
    if (failure === 'object' || failure === 'forbidden') return 'refused';
    if (failure === 'unknown') return 'failed';
    return attempt >= this.#maxAttempts ? 'retries_spent' : undefined;
  }

  #drop(reason: EventDropReason, regarding: KubeObject, input: EventInput, error?: unknown): void {
    // a broken metric or logger must not become an unhandled rejection
    try {
      this.options.onDropped?.(reason);
      const fields = {
        ...(error === undefined ? {} : { err: error }),
        dropped: reason,
        eventReason: input.reason,
        namespace: regarding.metadata.namespace ?? '',
        name: regarding.metadata.name,
      };
      // a moved partition or a deleted namespace is routine, not a warning
      if (reason === 'fenced' || reason === 'namespace_gone')
        this.options.log.debug(fields, 'an Event was not recorded');
      else this.options.log.warn(fields, 'an Event was not recorded');
    } catch {
      // nothing left to tell
    }
  }
}

/** What an Event names of its object: kept while it is sent instead of the whole object. */
function referenceOf(object: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = object.metadata;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      uid,
      resourceVersion,
    },
  };
}

/** The apiserver's answer for an Event in a namespace that is gone or being deleted. */
function namespaceGone(error: unknown): boolean {
  if (isKubeApiError(error, 404)) return true;
  return isKubeApiError(error, 403) && /being terminated/.test(error.message);
}
