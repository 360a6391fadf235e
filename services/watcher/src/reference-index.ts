// Which primaries refer to which objects of a watched resource (a `watches`
// entry with `references`): kept from every primary the watcher sees, so a
// change to a referenced object reconciles the primaries that name it, as
// controller-runtime's field indexers let a map function find them. It holds
// names only, one entry per reference.
import type { KubeObject } from '@kubebus/shared/events';
import type { NamedRef } from './config.js';
import { guardedRefs } from './named-refs.js';

/** A key of one object: its namespace ('' when cluster-scoped) and name. */
export type PlaceKey = string;

export const placeKey = (namespace: string, name: string): PlaceKey => `${namespace}/${name}`;

export class ReferenceIndex {
  /** referenced object → the primaries naming it */
  readonly #referrers = new Map<PlaceKey, Set<PlaceKey>>();
  /** primary → what it names (to take it out when it changes or goes) */
  readonly #references = new Map<PlaceKey, readonly PlaceKey[]>();

  /**
   * @param referencedNamespaced whether the referenced resource is namespaced
   * @param references the primary's references (its namespace is the default)
   */
  constructor(
    private readonly referencedNamespaced: boolean,
    private readonly references: (primary: KubeObject) => readonly NamedRef[],
  ) {}

  get size(): number {
    return this.#references.size;
  }

  /** The primary as it is now: what it names replaces what it named. */
  update(primary: KubeObject): void {
    const namespace = primary.metadata.namespace ?? '';
    const key = placeKey(namespace, primary.metadata.name);
    this.remove(namespace, primary.metadata.name);
    const named = new Set<PlaceKey>();
    for (const ref of guardedRefs(() => this.references(primary))) {
      const at = this.referencedNamespaced ? (ref.namespace ?? namespace) : '';
      // a cluster-scoped primary must say where a namespaced object is
      if (this.referencedNamespaced && at === '') continue;
      named.add(placeKey(at, ref.name));
    }
    if (named.size === 0) return;
    this.#references.set(key, [...named]);
    for (const referenced of named) {
      const referrers = this.#referrers.get(referenced) ?? new Set<PlaceKey>();
      referrers.add(key);
      this.#referrers.set(referenced, referrers);
    }
  }

  /** The primary is gone: it names nothing any more. */
  remove(namespace: string, name: string): void {
    const key = placeKey(namespace, name);
    for (const referenced of this.#references.get(key) ?? []) {
      const referrers = this.#referrers.get(referenced);
      referrers?.delete(key);
      if (referrers?.size === 0) this.#referrers.delete(referenced);
    }
    this.#references.delete(key);
  }

  /** The primaries naming this object, as namespace and name. */
  referrers(namespace: string, name: string): { namespace: string; name: string }[] {
    return [...(this.#referrers.get(placeKey(namespace, name)) ?? [])].map((key) => {
      const slash = key.indexOf('/');
      return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
    });
  }
}
