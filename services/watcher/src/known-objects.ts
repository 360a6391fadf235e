// The object state the watcher keeps: uid → resourceVersion (plus what a
// tombstone needs), so a relist can tell what changed or vanished in the gap.
// Seeded at start from the last event per object in KUBEBUS_EVENTS, which
// also tells the watcher which owner and which `map` answers each object last
// named (mapped-marks.ts).
import { Streams, readMessages, subjects } from '@kubebus/shared/bus';
import { decodeNatsMessage, opOf, type KubeObject } from '@kubebus/shared/events';
import type { NatsConnection } from '@nats-io/nats-core';
import type { WatchedResource } from './targets.js';

export interface KnownObject {
  readonly resourceVersion: string;
  readonly name: string;
  readonly namespace: string;
}

export class KnownObjects {
  readonly #byUid = new Map<string, KnownObject>();

  get size(): number {
    return this.#byUid.size;
  }

  get(uid: string): KnownObject | undefined {
    return this.#byUid.get(uid);
  }

  remember(object: KubeObject): void {
    const { uid, resourceVersion, name, namespace = '' } = object.metadata;
    this.#byUid.set(uid, { resourceVersion, name, namespace });
  }

  forget(uid: string): void {
    this.#byUid.delete(uid);
  }

  entries(): IterableIterator<[string, KnownObject]> {
    return this.#byUid.entries();
  }

  /** A minimal object standing for one that vanished (client-go's DeletedFinalStateUnknown). */
  tombstone(resource: WatchedResource, uid: string, known: KnownObject): KubeObject {
    return {
      apiVersion:
        resource.group === '' ? resource.version : `${resource.group}/${resource.version}`,
      kind: resource.kind,
      metadata: {
        uid,
        name: known.name,
        resourceVersion: known.resourceVersion,
        ...(known.namespace === '' ? {} : { namespace: known.namespace }),
      },
    };
  }

  /**
   * Reads the last recorded event of every object of `resource` (one pass);
   * `recall` gets the state each one that still exists was last published in
   * (not one published by reference: its event carries none).
   */
  async seed(
    nc: NatsConnection,
    resource: WatchedResource,
    recall: (object: KubeObject) => void = () => undefined,
  ): Promise<void> {
    const messages = await readMessages(
      nc,
      Streams.events,
      subjects.eventsOf(resource),
      'last-per-subject',
    );
    for (const message of messages) {
      const decoded = decodeNatsMessage(message.data, undefined);
      if (!decoded.ok) continue;
      const { event } = decoded;
      if (opOf(event) === 'delete') this.forget(event.kbuid);
      else {
        if (event.data !== undefined) recall(event.data);
        this.#byUid.set(event.kbuid, {
          resourceVersion: event.kbrv,
          name: event.name,
          namespace: event.namespace ?? '',
        });
      }
    }
  }
}
