// A status intent: the status a reconciler wants on an object, for the
// generation it observed. The status writer applies the latest one per object.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { z } from 'zod';
import { ObjectKeySchema } from '../kube/names.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { PublishedStatus, type OwnStatus } from './published-status.js';
import { IntentsOnTheBus, type InProcessStatusWriter, type WriteGuard } from './status-handoff.js';
import { partitionOf, subjects } from './subjects.js';
import { jsonOf } from './json-message.js';
import { Streams } from './topology.js';

export const StatusIntentSchema = z.object({
  /** checked by Kubernetes' naming rules: the writer builds the /status path from it */
  key: ObjectKeySchema,
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  /** the object's incarnation: an intent never applies to a re-created object */
  uid: z.string().min(1),
  /** the metadata.generation the reconciler saw; also written as status.observedGeneration */
  observedGeneration: z.number().int().nonnegative(),
  status: z.record(z.string(), z.unknown()),
  traceparent: z.string().optional(),
  reconcileId: z.string().optional(),
  time: z.string(),
});

export type StatusIntent = z.infer<typeof StatusIntentSchema>;

export function encodeStatusIntent(
  intent: Omit<StatusIntent, 'key'> & { key: ObjectKey },
): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ ...intent, key: { ...intent.key } }));
}

/**
 * Publishes a controller's status intents to KUBEBUS_STATUS, one pending per
 * object (latest wins), on its own subjects (kubebus.status.<controller>.…):
 * only its status writers consume them.
 */
/** How long one read of the pending intents serves the partitions taken after it. */
const PENDING_READ_REUSE_MS = 2_000;

export class StatusPublisher {
  readonly #published = new PublishedStatus();
  /** the pending intents as last read, for the partitions taken in the same lease round */
  #pendingRead: { at: number; intents: StatusIntent[]; unread: number } | undefined;

  /** objects whose intents may be pending on the bus: theirs are not written here first */
  readonly #onTheBus = new IntentsOnTheBus();
  #jsm: Promise<JetStreamManager> | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly controller: string,
    private readonly partitions: number,
    /** the status writer of this process, when it runs one: intents go to it first (ADR 0028) */
    private readonly inProcess?: InProcessStatusWriter,
  ) {}

  /**
   * Publishes the intent — unless `current` (the object's status as the
   * reconciler read it) shows it in place, or shows what it showed when this
   * process published the same intent moments ago (published-status.ts): a
   * re-reconcile then costs the status writer nothing. Without `current`,
   * always publishes (and forgets what it published before for the object).
   */
  async publish(
    intent: Omit<StatusIntent, 'key' | 'time'> & { key: ObjectKey },
    current?: Record<string, unknown>,
    guard?: WriteGuard,
  ): Promise<void> {
    if (current !== undefined && this.#published.redundant(intent, current)) return;
    const stamped: StatusIntent = {
      ...intent,
      key: { ...intent.key },
      time: new Date().toISOString(),
    };
    const subject = subjects.status(
      this.controller,
      partitionOf(intent.key, this.partitions),
      intent.key,
    );
    const written =
      this.inProcess !== undefined &&
      (await this.#noneOnTheBus(intent.uid, subject)) &&
      (await this.inProcess.write(stamped, guard));
    if (!written) {
      // declined because the reconcile may no longer write: nothing goes on the bus either
      guard?.signal.throwIfAborted();
      guard?.fence();
      await this.#onBus(subject, stamped);
    }
    // one published without `current` (a Degraded status) is a newer word than the memo
    if (current === undefined) this.#published.forget(intent.uid);
    else this.#published.published(intent, current);
  }

  async #onBus(subject: string, intent: StatusIntent): Promise<void> {
    const headers = natsHeaders();
    headers.set('content-type', 'application/json');
    if (intent.traceparent !== undefined) headers.set('traceparent', intent.traceparent);
    // tracked before it is sent: an intent the publish times out on may still be stored
    this.#onTheBus.added(intent.uid);
    await this.js
      .publish(subject, encodeStatusIntent(intent), { headers })
      .catch((error: unknown) => {
        this.#published.forget(intent.uid);
        throw error;
      });
  }

  /**
   * Whether no intent of the object is pending on the bus, so one written
   * here cannot be overtaken by an older one (status-handoff.ts). A leader
   * get, and only for an object that went on the bus; an error says "maybe".
   */
  async #noneOnTheBus(uid: string, subject: string): Promise<boolean> {
    if (!this.#onTheBus.mayBePending(uid)) return true;
    try {
      const jsm = await this.#manager();
      const pending = await jsm.streams.getMessage(Streams.status, { last_by_subj: subject });
      if (pending !== null) return false;
      this.#onTheBus.cleared(uid);
      return true;
    } catch {
      return false;
    }
  }

  /** One manager for this publisher's reads, made without asking the server for its account. */
  #manager(): Promise<JetStreamManager> {
    this.#jsm ??= this.js.jetstreamManager(false);
    return this.#jsm;
  }

  /** The object's status as this process' own last intent for it makes it (published-status.ts). */
  own(object: {
    readonly uid: string;
    readonly generation: number;
    readonly status: Record<string, unknown>;
  }): OwnStatus | undefined {
    return this.#published.own(object);
  }

  /**
   * Read-your-own-writes across owners (ADR 0019): remembers the intents of
   * this controller still pending in KUBEBUS_STATUS (unwritten: the writer
   * acks, and so removes, what it wrote) for the objects `taken` selects —
   * the partition this process just took — as if it had published them. How
   * many it remembered. A status partition with more pending intents than
   * one read answers (1,024) throws, after the others are remembered.
   */
  async inherit(taken: (key: ObjectKey) => boolean): Promise<number> {
    const { intents, unread } = await this.#pendingIntents().catch((error: unknown) => {
      this.#onTheBus.lostTrack();
      throw error;
    });
    let inherited = 0;
    for (const intent of intents)
      if (taken(intent.key)) {
        this.#published.inherit(intent);
        this.#onTheBus.added(intent.uid);
        inherited++;
      }
    if (unread > 0) {
      this.#onTheBus.lostTrack();
      throw new Error(
        `${unread} of ${this.partitions} status partitions hold more pending intents than one read answers: theirs are not handed down`,
      );
    }
    return inherited;
  }

  /**
   * The pending intents of a taken partition cannot be read (nats-server
   * before 2.11): none is inherited, and none of them is overtaken by an
   * intent written in this process — each object's bus is checked first.
   */
  pendingUnknown(): void {
    this.#onTheBus.lostTrack();
  }

  /**
   * The last pending intent of each object, one batched direct get per status
   * partition (nats-server >= 2.11); read once for the partitions taken in one
   * lease round: whoever published them publishes no more.
   */
  async #pendingIntents(): Promise<{ intents: StatusIntent[]; unread: number }> {
    const read = this.#pendingRead;
    if (read !== undefined && Date.now() - read.at < PENDING_READ_REUSE_MS) return read;
    const jsm = await this.#manager();
    const intents: StatusIntent[] = [];
    let unread = 0;
    for (let partition = 0; partition < this.partitions; partition++) {
      try {
        const pending = await jsm.direct.getLastMessagesFor(Streams.status, {
          multi_last: [subjects.statusOfPartition(this.controller, partition)],
        });
        for await (const stored of pending) {
          const parsed = StatusIntentSchema.safeParse(jsonOf(stored.data));
          if (parsed.success) intents.push(parsed.data);
        }
      } catch {
        // more than the server answers at once (413): that partition is not handed down
        unread++;
      }
    }
    this.#pendingRead = { at: Date.now(), intents, unread };
    return this.#pendingRead;
  }
}
