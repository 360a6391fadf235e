// The objects of a resource, for ctx.list and pruning: the last record of each
// on KUBEBUS_EVENTS (one batched direct get with a wildcard, nats-server >=
// 2.11), as ctx.get reads one. The server answers at most 1024 subjects
// (deleted objects count until the stream forgets them); past that, and on
// older servers, one pass through a consumer (one-pass.ts) reads the last of each. Never the
// apiserver: the reconciler's RBAC grants no list of what it owns or
// watches, and no read of Secrets (generate/rbac.ts). Without a bus (a
// replay, with its user's own credentials) the apiserver lists them.
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import {
  IncompleteBatch,
  lastMessagesFor,
  readMessages,
  Streams,
  subjects,
  type BusConnection,
} from '@kubebus/shared/bus';
import { decodeNatsMessage, opOf, type KubeObject } from '@kubebus/shared/events';
import {
  apiVersionOf,
  collectionPath,
  withoutSecretValues,
  type KubeClient,
} from '@kubebus/shared/kube';
import type { Resource } from '@kubebus/shared/definition';
import { refOf } from './known-resources.js';

/** A listing pass not done by then fails the reconcile, which is retried (transient). */
const PASS_DEADLINE_MS = 30_000;

/** An object's last record on the bus. */
interface Recorded {
  readonly data: Uint8Array;
  readonly header: Parameters<typeof decodeNatsMessage>[1];
}

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
    // a list's items carry no apiVersion and kind; Secrets come as the bus records them,
    // without their values (ctx.readSecret is how an operator reads those, live or replayed)
    return (answer.items ?? []).map((item) =>
      withoutSecretValues({ ...item, apiVersion, kind: resource.kind }),
    );
  }
}

export class BusLister implements ObjectLister {
  #jsm: Promise<JetStreamManager> | undefined;

  constructor(
    private readonly bus: BusConnection,
    /** fetches what was published by reference (objects too large for the bus) */
    private readonly client: KubeClient,
    /** batched direct gets (multi_last) need nats-server >= 2.11 */
    private readonly batch: boolean,
  ) {}

  async list(resource: Resource, namespace: string | undefined): Promise<KubeObject[]> {
    const filter =
      namespace === undefined
        ? subjects.eventsOf({ group: resource.group, resource: resource.plural })
        : wildcardName(resource, namespace);
    const records = (await this.#lastInOneBatch(filter)) ?? (await this.#lastInOnePass(filter));
    const objects = await Promise.all(records.map((record) => this.#decode(record)));
    return objects.filter((object): object is KubeObject => object !== undefined);
  }

  /** One batched direct get; undefined when more answer than one batch holds, or the server is older. */
  async #lastInOneBatch(filter: string): Promise<Recorded[] | undefined> {
    if (!this.batch) return undefined;
    this.#jsm ??= jetstreamManager(this.bus.nc, { checkAPI: false });
    const jsm = await this.#jsm;
    try {
      return [...(await lastMessagesFor(this.bus.nc, jsm, Streams.events, [filter])).values()];
    } catch (error) {
      // more than the server answers in one batch (413 Too Many Results, or cut short)
      if (!(error instanceof IncompleteBatch)) throw error;
      return undefined;
    }
  }

  /**
   * The last record of each subject in one pass (one-pass.ts): still the
   * bus, never a LIST of the apiserver (the reconciler may not list what it
   * owns, nor read Secrets' data).
   */
  #lastInOnePass(filter: string): Promise<Recorded[]> {
    return readMessages(this.bus.nc, Streams.events, filter, 'last-per-subject', {
      deadlineMs: PASS_DEADLINE_MS,
    });
  }

  async #decode(record: Recorded): Promise<KubeObject | undefined> {
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
