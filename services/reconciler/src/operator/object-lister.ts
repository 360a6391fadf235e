// The objects of a resource, for ctx.list and pruning: the last record of each
// on KUBEBUS_EVENTS (one batched direct get with a wildcard, nats-server >=
// 2.11), as ctx.get reads one. The server answers at most 1024 subjects
// (deleted objects count until the stream forgets them); past that, and on
// older servers, the objects are listed from the apiserver instead.
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import {
  IncompleteBatch,
  lastMessagesFor,
  Streams,
  subjects,
  type BusConnection,
} from '@kubebus/shared/bus';
import { decodeNatsMessage, opOf, type KubeObject } from '@kubebus/shared/events';
import { apiVersionOf, collectionPath, type KubeClient } from '@kubebus/shared/kube';
import type { Resource } from '@kubebus/shared/definition';
import { refOf } from './known-resources.js';

export interface ObjectLister {
  /** every object of `resource` in `namespace` (undefined: all namespaces) */
  list(resource: Resource, namespace: string | undefined): Promise<KubeObject[]>;
}

/** Lists from the apiserver: one GET of the collection. */
export class ApiserverLister implements ObjectLister {
  constructor(private readonly client: KubeClient) {}

  async list(resource: Resource, namespace: string | undefined): Promise<KubeObject[]> {
    const answer = await this.client.request<{ items?: KubeObject[] }>(
      collectionPath(refOf(resource), namespace),
    );
    const apiVersion = apiVersionOf(refOf(resource));
    // a list's items carry no apiVersion and kind
    return (answer.items ?? []).map((item) => ({ ...item, apiVersion, kind: resource.kind }));
  }
}

export class BusLister implements ObjectLister {
  #jsm: Promise<JetStreamManager> | undefined;
  readonly #fallback: ApiserverLister;

  constructor(
    private readonly bus: BusConnection,
    private readonly client: KubeClient,
    /** batched direct gets (multi_last) need nats-server >= 2.11 */
    private readonly batch: boolean,
  ) {
    this.#fallback = new ApiserverLister(client);
  }

  async list(resource: Resource, namespace: string | undefined): Promise<KubeObject[]> {
    if (!this.batch) return this.#fallback.list(resource, namespace);
    const filter =
      namespace === undefined
        ? subjects.eventsOf({ group: resource.group, resource: resource.plural })
        : wildcardName(resource, namespace);
    this.#jsm ??= jetstreamManager(this.bus.nc, { checkAPI: false });
    const jsm = await this.#jsm;
    const records: { data: Uint8Array; header: Parameters<typeof decodeNatsMessage>[1] }[] = [];
    try {
      for (const stored of (
        await lastMessagesFor(this.bus.nc, jsm, Streams.events, [filter])
      ).values())
        records.push({ data: stored.data, header: stored.header });
    } catch (error) {
      // more than the server answers in one batch (413 Too Many Results, or cut short)
      if (!(error instanceof IncompleteBatch)) throw error;
      return this.#fallback.list(resource, namespace);
    }
    const objects = await Promise.all(records.map((record) => this.#decode(record)));
    return objects.filter((object): object is KubeObject => object !== undefined);
  }

  async #decode(record: {
    data: Uint8Array;
    header: Parameters<typeof decodeNatsMessage>[1];
  }): Promise<KubeObject | undefined> {
    const decoded = decodeNatsMessage(record.data, record.header);
    if (!decoded.ok) throw decoded.error;
    const { event } = decoded;
    if (opOf(event) === 'delete') return undefined;
    if (event.kbref === 'apiserver' || event.data === undefined)
      return this.client.getIfExists<KubeObject>(event.subject);
    return event.data;
  }
}

/** kubebus.events.<group>.<resource>.<namespace>.* */
function wildcardName(resource: Resource, namespace: string): string {
  const one = subjects.event({
    group: resource.group,
    resource: resource.plural,
    namespace,
    name: 'x',
  });
  return `${one.slice(0, one.lastIndexOf('.'))}.*`;
}
