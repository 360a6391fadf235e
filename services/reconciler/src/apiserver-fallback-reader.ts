// The reader of a reconciler that runs behind Knative without a watcher: the
// stream has no record of the objects, so what it lacks is read from the
// apiserver. (Beside a watcher, only the object reconciled is: its record may
// have been discarded from a full KUBEBUS_EVENTS.) Not from the event that triggered the reconcile: Knative's
// Broker redelivers, and an older event retried after a newer one would make
// the reconcile act on a spec that is no longer there.
import type { ObjectReader } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import {
  isKubeApiError,
  objectPath,
  type KubeClient,
  type ResourceRef,
} from '@kubebus/shared/kube';
import type { Logger } from '@kubebus/shared/obs';
import type { ObjectKey } from '@kubebus/shared/runtime';

export class ApiserverFallbackReader implements Pick<ObjectReader, 'read' | 'readAll'> {
  readonly #resources = new Map<string, ResourceRef>();
  readonly #refused = new Set<string>();

  constructor(
    private readonly stream: Pick<ObjectReader, 'read' | 'readAll'>,
    private readonly client: KubeClient,
    /** the resources it may read: the operator's for, owns and watches */
    resources: readonly ResourceRef[],
    private readonly log: Logger,
    /** owned: false reads only what read() asks (the object reconciled) from the apiserver */
    private readonly fallback: { readonly owned: boolean } = { owned: true },
  ) {
    for (const resource of resources)
      this.#resources.set(`${resource.group}/${resource.resource}`, resource);
  }

  async read(key: ObjectKey): Promise<KubeObject | undefined> {
    return (await this.stream.read(key)) ?? this.#fromApiserver(key);
  }

  async readAll(keys: readonly ObjectKey[]): Promise<(KubeObject | undefined)[]> {
    const recorded = await this.stream.readAll(keys);
    if (!this.fallback.owned) return recorded;
    return Promise.all(
      recorded.map((object, i) =>
        object === undefined ? this.#fromApiserver(keys[i] as ObjectKey) : Promise.resolve(object),
      ),
    );
  }

  /** The object as the apiserver has it now (not the bus): throws when it cannot say. */
  async live(key: ObjectKey): Promise<KubeObject | undefined> {
    const resource = this.#resources.get(`${key.group}/${key.resource}`);
    if (resource === undefined)
      throw new Error(`${key.group}/${key.resource} is not the operator's`);
    return this.client.getIfExists<KubeObject>(objectPath(resource, key.namespace, key.name));
  }

  async #fromApiserver(key: ObjectKey): Promise<KubeObject | undefined> {
    const resource = this.#resources.get(`${key.group}/${key.resource}`);
    if (resource === undefined) return undefined;
    try {
      return await this.client.getIfExists<KubeObject>(
        objectPath(resource, key.namespace, key.name),
      );
    } catch (error) {
      // a kind the reconciler may write but not read (Secrets): as if absent,
      // so createOnce creates and learns from a 409 that it exists
      if (!isKubeApiError(error, 403)) throw error;
      const what = `${key.group}/${key.resource}`;
      if (!this.#refused.has(what)) {
        this.#refused.add(what);
        this.log.warn(
          { resource: what },
          `the apiserver refuses to let this reconciler get ${what}: reads of it find nothing (grant get to read them)`,
        );
      }
      return undefined;
    }
  }
}
