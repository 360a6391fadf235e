// The current object for a reconcile, without an apiserver request: the last
// event of the object in KUBEBUS_EVENTS is a shared, durable cache. Objects
// published by reference are fetched through the given callback. With
// OwnWrites, no read answers an object older than this process last wrote
// of it (read-your-own-writes, ADR 0019): the common case — the record is the
// own write, or comes after the event that carried it — costs nothing more.
import type { JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import { opOf, type KubeCloudEvent } from '../events/kube-event.js';
import type { KubeObject } from '../events/kube-object.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import { withoutSecretValues } from '../kube/secret-values.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { OwnWrites, PendingWrite, RecordedRevision, StaleReadOutcome } from './own-writes.js';
import { directGet, IncompleteBatch, lastMessagesFor, type LastMessage } from './last-messages.js';
import { StreamReplicas } from './stream-replicas.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

export type FetchByReference = (apiPath: string) => Promise<KubeObject | undefined>;

export interface ReadYourWrites {
  readonly writes: OwnWrites;
  /** how long a read waits for the bus to record an own write before asking the apiserver */
  readonly waitMs: number;
  /** told each time a read had to do more than read (the stale-reads metric) */
  readonly onStaleRead?: (outcome: StaleReadOutcome) => void;
}

/** A catch-up asks again after 2 ms, then 4, 8, … at most 50 ms apart. */
const FIRST_PAUSE_MS = 2;
const LONGEST_PAUSE_MS = 50;

/** What a read answers, by whichever get */
type Stored = Pick<LastMessage, 'seq' | 'data' | 'header'>;

type DirectQuery = { last_by_subj: string } | { seq: number; next_by_subj: string };

interface Recorded {
  readonly revision: RecordedRevision;
  readonly event: KubeCloudEvent;
}

export class ObjectReader {
  readonly #replicas: StreamReplicas;

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly fetchByReference: FetchByReference,
    /** where direct gets are sent on the connection's inbox, batched (multi_last, nats-server >= 2.11); without it, one nats.js read each */
    private readonly batchVia?: NatsConnection,
    private readonly ownWrites?: ReadYourWrites,
  ) {
    this.#replicas = new StreamReplicas(jsm, Streams.events);
  }

  /**
   * The object as last recorded, or undefined when it was deleted or never
   * seen. Asked of the stream's leader, not with a direct get that any
   * replica may answer: a replica catching up after a restart answers "not
   * there" or an older revision, and a reconcile that believed it would ack
   * its work for an object it never saw (a stream of one replica has no
   * other server to answer: there the direct get is the leader's read, at a
   * third of its cost). Reads of what the object owns stay direct and
   * batched: a stale one costs a redundant write, never a lost change — and
   * one older than this process' own write of it is caught (OwnWrites).
   */
  async read(key: ObjectKey): Promise<KubeObject | undefined> {
    const query = { last_by_subj: subjects.event(key) };
    if (!(await this.#replicas.single())) {
      const stored = await this.jsm.streams.getMessage(Streams.events, query);
      return this.#answer(key, stored ?? undefined);
    }
    return this.#answer(key, await this.#direct(query));
  }

  /**
   * Several objects with one request (nats-server >= 2.11, else one each), in
   * the order of `keys`.
   */
  async readAll(keys: readonly ObjectKey[]): Promise<(KubeObject | undefined)[]> {
    if (this.batchVia === undefined || keys.length < 2)
      return Promise.all(keys.map((key) => this.read(key)));
    const wanted = keys.map((key) => subjects.event(key));
    let found: Map<string, Stored>;
    try {
      found = await lastMessagesFor(this.batchVia, this.jsm, Streams.events, wanted);
    } catch (error) {
      // more than one batch answers (objects near the size limit): one read each
      if (!(error instanceof IncompleteBatch)) throw error;
      return Promise.all(keys.map((key) => this.read(key)));
    }
    return Promise.all(keys.map((key, i) => this.#answer(key, found.get(wanted[i] as string))));
  }

  async #answer(key: ObjectKey, stored: Stored | undefined): Promise<KubeObject | undefined> {
    const recorded =
      stored === undefined ? undefined : recordOf(stored.seq, stored.data, stored.header);
    const own = this.ownWrites;
    if (own !== undefined) {
      if (recorded !== undefined) own.writes.read(key, recorded.revision.seq);
      const freshness = own.writes.freshness(key, recorded?.revision);
      const pending = freshness === 'fresh' ? undefined : own.writes.pending(key);
      if (pending !== undefined && recorded !== undefined && freshness === 'unknown') {
        // a later record of another revision: usually the own write is the
        // first event after the read before it — one direct get to tell
        if (await this.#firstAfterIsOwn(key, pending)) {
          own.onStaleRead?.('superseded');
          return this.#objectOf(recorded.event);
        }
      }
      if (pending !== undefined) return this.#catchUp(key, pending, recorded, own);
    }
    return recorded === undefined ? undefined : this.#objectOf(recorded.event);
  }

  /**
   * The record may be older than the own write: the object's events from
   * where the write can first be, one direct get at a time, that also
   * waits (bounded) for the watcher to publish it; then the latest of them.
   * Not in time: one GET from the apiserver, which answers the current object.
   */
  async #catchUp(
    key: ObjectKey,
    pending: PendingWrite,
    recorded: Recorded | undefined,
    own: ReadYourWrites,
  ): Promise<KubeObject | undefined> {
    const at = recorded?.revision.seq ?? 0;
    // the bus was found behind at this very record before: it still is
    if (pending.fellBackAt !== at) {
      // a get that fails (NATS away, a leader election) ends the wait: the apiserver answers
      const caughtUp = await this.#followUntil(key, pending, own.waitMs).catch(() => undefined);
      if (caughtUp !== undefined) {
        own.onStaleRead?.(caughtUp.waited ? 'waited' : 'superseded');
        return caughtUp.latest === undefined ? undefined : this.#objectOf(caughtUp.latest.event);
      }
    }
    pending.fellBack(at);
    let current: KubeObject | undefined;
    try {
      current = await this.fetchByReference(pending.path);
    } catch {
      // the apiserver refuses (a kind this reconciler may write but not get)
      // or is down: the record, as without read-your-own-writes
      own.onStaleRead?.('unavailable');
      return recorded === undefined ? undefined : this.#objectOf(recorded.event);
    }
    pending.answered(current, at);
    own.onStaleRead?.('fell_back');
    return withoutSecretValues(current);
  }

  async #firstAfterIsOwn(key: ObjectKey, pending: PendingWrite): Promise<boolean> {
    const next = await this.#nextOf(subjects.event(key), Math.max(1, pending.from));
    return next !== null && pending.reached(recordOf(next.seq, next.data, next.header).revision);
  }

  /**
   * The object's records from where the own write can first be, in order,
   * one direct get each, until it is among them; while it is not, asked again
   * after a pause that doubles (the watcher has not published it yet), until
   * `waitMs`. No consumer: nats.js' ordered consumer costs a stream info, a
   * consumer create and info, and stays on the server for five minutes after
   * it is closed (a runtime user may not delete consumers, ADR 0015); at
   * 10,000 objects those reached the stream's consumer limit.
   */
  async #followUntil(
    key: ObjectKey,
    pending: PendingWrite,
    waitMs: number,
  ): Promise<{ readonly latest: Recorded | undefined; readonly waited: boolean } | undefined> {
    const subject = subjects.event(key);
    const deadline = performance.now() + waitMs;
    let from = Math.max(1, pending.from);
    let latest: Recorded | undefined;
    let reached = false;
    let waited = false;
    for (let pauseMs = FIRST_PAUSE_MS; ; pauseMs = Math.min(2 * pauseMs, LONGEST_PAUSE_MS)) {
      for (let next = await this.#nextOf(subject, from); next !== null;) {
        const record = recordOf(next.seq, next.data, next.header);
        latest = record;
        from = next.seq + 1;
        if (!reached && pending.reached(record.revision)) reached = true;
        // an object written faster than it is read: the bound holds all the same
        if (performance.now() >= deadline) return reached ? { latest, waited } : undefined;
        next = await this.#nextOf(subject, from);
      }
      if (reached) return { latest, waited };
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await sleep(Math.min(pauseMs, left));
      waited = true;
    }
  }

  /** The object's first record at or after `seq`, or null. */
  async #nextOf(subject: string, seq: number): Promise<Stored | null> {
    return (await this.#direct({ seq, next_by_subj: subject })) ?? null;
  }

  /** A direct get, on the connection's inbox where there is one (a quarter of nats.js' CPU). */
  async #direct(query: DirectQuery): Promise<Stored | undefined> {
    if (this.batchVia !== undefined)
      return directGet(this.batchVia, this.jsm, Streams.events, query);
    return (await this.jsm.direct.getMessage(Streams.events, query)) ?? undefined;
  }

  async #objectOf(event: KubeCloudEvent): Promise<KubeObject | undefined> {
    if (opOf(event) === 'delete') return undefined;
    if (event.kbref === 'apiserver' || event.data === undefined)
      return this.fetchByReference(event.subject);
    return event.data;
  }
}

function recordOf(seq: number, data: Uint8Array, headers: MsgHdrs | undefined): Recorded {
  const decoded = decodeNatsMessage(data, headers);
  if (!decoded.ok) throw decoded.error;
  const { event } = decoded;
  const gone = opOf(event) === 'delete' || event.data?.metadata.deletionTimestamp !== undefined;
  return { event, revision: { seq, uid: event.kbuid, resourceVersion: event.kbrv, gone } };
}
