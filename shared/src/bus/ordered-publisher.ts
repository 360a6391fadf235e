// Publishes to JetStream asynchronously with a bounded number of units in flight,
// keeping order per key: the units of one key are published one after another,
// units of different keys side by side. Transport failures (NATS down, timeouts)
// are retried for ever with backoff — a unit is never skipped; so is a stream at
// its max_bytes (a work queue full until its consumers ack: back-pressure, see
// topology-limits.ts); a message the server rejects otherwise is retried a few
// times and then reported to the caller.
import { JetStreamApiError } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { backoffDelay, type BackoffPolicy } from '../runtime/backoff.js';
import type { StorePublisher } from './inbox-publisher.js';
import { isStreamFull } from './topology-limits.js';

export interface OutgoingMessage {
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** Nats-Msg-Id: the stream stores one message per id within its duplicate window */
  readonly msgId: string;
}

export interface PublisherOptions {
  readonly maxInFlight: number;
  readonly retry: BackoffPolicy;
  readonly ackTimeoutMs: number;
  /** attempts for a message the server rejects, before the unit fails */
  readonly maxRejections: number;
  readonly onRetry?: (message: OutgoingMessage, attempt: number, error: unknown) => void;
  readonly onPublished?: (message: OutgoingMessage, durationMs: number, duplicate: boolean) => void;
}

export interface Submitted {
  readonly completion: Promise<void>;
}

export class PublishRejectedError extends Error {
  override readonly name = 'PublishRejectedError';
  constructor(
    readonly rejected: OutgoingMessage,
    cause: unknown,
  ) {
    super(`JetStream rejected ${rejected.subject}: ${(cause as Error).message}`, { cause });
  }
}

export class OrderedPublisher {
  readonly #tails = new Map<string, Promise<void>>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #waiters: (() => void)[] = [];
  #stopped = false;

  constructor(
    private readonly js: StorePublisher,
    private readonly options: PublisherOptions,
  ) {}

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Waits for room in the window, then starts publishing `messages` in order
   * after the earlier units of `key`. Returns the unit's completion (wrapped, so
   * awaiting the room does not await the publish), which rejects only with
   * PublishRejectedError.
   */
  async submit(key: string, messages: readonly OutgoingMessage[]): Promise<Submitted> {
    while (this.#inFlight.size >= this.options.maxInFlight) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const unit = previous.catch(() => undefined).then(() => this.#publishAll(messages));
    const settled = unit.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, settled);
    this.#inFlight.add(settled);
    void settled.then(() => {
      this.#inFlight.delete(settled);
      if (this.#tails.get(key) === settled) this.#tails.delete(key);
      this.#waiters.shift()?.();
    });
    return { completion: unit };
  }

  /** Waits until everything submitted so far has settled. */
  async flush(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  /** Stops retrying; units still retrying reject. */
  stop(): void {
    this.#stopped = true;
  }

  async #publishAll(messages: readonly OutgoingMessage[]): Promise<void> {
    for (const message of messages) await this.#publishOne(message);
  }

  async #publishOne(message: OutgoingMessage): Promise<void> {
    let rejections = 0;
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      try {
        const hdrs = natsHeaders();
        for (const [name, value] of Object.entries(message.headers)) hdrs.set(name, value);
        const ack = await this.js.publish(message.subject, message.payload, {
          msgID: message.msgId,
          headers: hdrs,
          timeout: this.options.ackTimeoutMs,
        });
        this.options.onPublished?.(message, performance.now() - started, ack.duplicate);
        return;
      } catch (error) {
        if (this.#stopped) throw error;
        if (
          error instanceof JetStreamApiError &&
          !isStreamFull(error) &&
          ++rejections >= this.options.maxRejections
        ) {
          throw new PublishRejectedError(message, error);
        }
        this.options.onRetry?.(message, attempt, error);
        await new Promise((resolve) =>
          setTimeout(resolve, backoffDelay(this.options.retry, attempt)),
        );
      }
    }
  }
}
