// The current object for a reconcile, without an apiserver request: the last
// event of the object in KUBEBUS_EVENTS is a shared, durable cache. Objects
// published by reference are fetched through the given callback.
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { opOf } from '../events/kube-event.js';
import type { KubeObject } from '../events/kube-object.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

export type FetchByReference = (apiPath: string) => Promise<KubeObject | undefined>;

export class ObjectReader {
  constructor(
    private readonly jsm: JetStreamManager,
    private readonly fetchByReference: FetchByReference,
    /** batched direct gets (multi_last) need nats-server >= 2.11 */
    private readonly batch = false,
  ) {}

  /**
   * The object as last recorded, or undefined when it was deleted or never
   * seen. Asked of the stream's leader, not with a direct get that any
   * replica may answer: a replica catching up after a restart answers "not
   * there" or an older revision, and a reconcile that believed it would ack
   * its work for an object it never saw. Reads of what the object owns stay direct and
   * batched: a stale one costs a redundant write, never a lost change.
   */
  async read(key: ObjectKey): Promise<KubeObject | undefined> {
    const stored = await this.jsm.streams.getMessage(Streams.events, {
      last_by_subj: subjects.event(key),
    });
    return stored === null ? undefined : this.#decode(stored);
  }

  /**
   * Several objects with one request (nats-server >= 2.11, else one each), in
   * the order of `keys`.
   */
  async readAll(keys: readonly ObjectKey[]): Promise<(KubeObject | undefined)[]> {
    if (!this.batch || keys.length < 2) return Promise.all(keys.map((key) => this.read(key)));
    const wanted = keys.map((key) => subjects.event(key));
    const found = new Map<string, StoredMsg>();
    for await (const stored of await this.jsm.direct.getLastMessagesFor(Streams.events, {
      multi_last: wanted,
    }))
      found.set(stored.subject, stored);
    return Promise.all(
      wanted.map(async (subject) => {
        const stored = found.get(subject);
        return stored === undefined ? undefined : this.#decode(stored);
      }),
    );
  }

  async #decode(stored: StoredMsg): Promise<KubeObject | undefined> {
    const decoded = decodeNatsMessage(stored.data, stored.header);
    if (!decoded.ok) throw decoded.error;
    const { event } = decoded;
    if (opOf(event) === 'delete') return undefined;
    if (event.kbref === 'apiserver' || event.data === undefined)
      return this.fetchByReference(event.subject);
    return event.data;
  }
}
