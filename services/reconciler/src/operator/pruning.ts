// Pruning, as `kubectl apply --prune` and ApplySets do it: after a successful
// reconcile, the objects of the owned kinds that name the reconciled object
// as their controller owner and carry the operator's label (it applied them),
// but that this reconcile did not apply or create, are deleted. Never after a
// failed reconcile (the caller only calls it after success) and never in a
// dry run.
//
// What it costs: listing every owned kind of the namespace from the bus on
// every reconcile is quadratic in the objects of a namespace (measured: the
// reconciler's CPU tripled at 300 objects). So the process remembers what each
// owner's last successful reconcile applied, and deletes what the next one
// drops without listing anything; it lists only when it has no memory of the
// owner and the owner's children may have changed under it: its spec changed
// since the last successful reconcile, or a new version of the operator or a
// re-drive is reconciling it.
import { parseWorkMark } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import { objectPath, type KubeClient, type ObjectKey } from '@kubebus/shared/kube';
import type { Log, Operator, Resource } from '@kubebus/shared/definition';
import { fenced } from './fenced.js';
import { CONTROLLER_LABEL, deleteObject, ownedKey } from './owned-objects.js';
import { refOf } from './known-resources.js';
import type { ObjectLister } from './object-lister.js';

/** The owned kinds the operator prunes: `owns` less `prune.keep`; none with `prune: false`. */
export function prunedKinds(operator: Operator): Resource[] {
  const { prune = true } = operator;
  if (prune === false) return [];
  const keep = prune === true ? [] : prune.keep;
  return (operator.owns ?? []).filter(
    (kind) => !keep.some((kept) => kept.group === kind.group && kept.plural === kind.plural),
  );
}

/** What each owner's last successful reconcile applied, by uid; the oldest forgotten first. */
export class AppliedByOwner {
  readonly #sets = new Map<string, ReadonlySet<string>>();
  /** owners whose next pruning reconcile must list their children (a listing was deferred) */
  readonly #mustList = new Set<string>();
  /** owners remembered only from reconciles that did not prune (no full set to prune against) */
  readonly #partial = new Set<string>();

  constructor(private readonly capacity = 100_000) {}

  get(uid: string): ReadonlySet<string> | undefined {
    return this.#sets.get(uid);
  }

  /** What a pruning reconcile applied: the next one prunes against it. */
  set(uid: string, touched: ReadonlySet<string>): void {
    this.#mustList.delete(uid);
    this.#partial.delete(uid);
    this.#sets.delete(uid);
    this.#sets.set(uid, touched);
    if (this.#sets.size > this.capacity) {
      const oldest = this.#sets.keys().next();
      if (oldest.done !== true) this.forget(oldest.value);
    }
  }

  /**
   * A reconcile that did not prune (it reported Ready=False): what it applied
   * joins what is remembered, so a later reconcile that drops it prunes it;
   * and a listing it would have made is owed to the next one that prunes.
   */
  defer(uid: string, touched: ReadonlySet<string>, mustList: boolean): void {
    const previous = this.#sets.get(uid);
    const partial = previous === undefined || this.#partial.has(uid);
    const owed = mustList || this.#mustList.has(uid);
    this.set(uid, previous === undefined ? touched : new Set([...previous, ...touched]));
    if (partial) this.#partial.add(uid);
    if (owed) this.#mustList.add(uid);
  }

  /** Whether a deferred listing is owed to this owner's next pruning reconcile. */
  mustList(uid: string): boolean {
    return this.#mustList.has(uid);
  }

  /** Whether what is remembered came only from reconciles that did not prune: as good as none. */
  partial(uid: string): boolean {
    return this.#partial.has(uid);
  }

  forget(uid: string): void {
    this.#sets.delete(uid);
    this.#mustList.delete(uid);
    this.#partial.delete(uid);
  }
}

/**
 * With no memory of the owner, whether its children may differ from what
 * this reconcile applied: its spec changed since its last successful
 * reconcile, its last reconcile reported it not ready, False or Unknown (that one deferred its
 * pruning, and what it owed was remembered by a process that may be gone),
 * or an upgrade sweep or a re-drive is reconciling it.
 */
export function mayHaveDropped(owner: KubeObject, body: Uint8Array | undefined): boolean {
  const status = owner['status'] as
    { observedGeneration?: unknown; conditions?: unknown } | undefined;
  const observed = status?.observedGeneration;
  if (typeof observed === 'number' && (owner.metadata.generation ?? 0) > observed) return true;
  const conditions = Array.isArray(status?.conditions)
    ? (status.conditions as { type?: unknown; status?: unknown }[])
    : [];
  // not 'True': False or Unknown, as a reconcile that reports either defers its pruning
  if (conditions.some((condition) => condition.type === 'Ready' && condition.status !== 'True'))
    return true;
  if (body === undefined) return false;
  const parsed = parseWorkMark(body);
  return parsed.ok && (parsed.mark.reason === 'upgrade' || parsed.mark.reason === 'redrive');
}

export async function pruneOwned(options: {
  readonly kinds: readonly Resource[];
  /** the operator's name: the value of CONTROLLER_LABEL on what it applied */
  readonly controller: string;
  readonly owner: KubeObject;
  /** ownedKey of what the reconcile applied or created */
  readonly touched: ReadonlySet<string>;
  /** what the owner's previous successful reconcile in this process applied */
  readonly previous: ReadonlySet<string> | undefined;
  /** with no `previous`: list the owned kinds to find what to prune */
  readonly list: boolean;
  /** an object as last recorded (pruning from memory checks it is still this owner's) */
  readonly read: (key: ObjectKey) => Promise<KubeObject | undefined>;
  readonly lister: ObjectLister;
  readonly client: KubeClient;
  readonly log: Log;
  readonly signal: AbortSignal;
  /** asked right before each delete: throws when the reconcile may no longer act */
  readonly fence?: () => void;
}): Promise<number> {
  const { owner } = options;
  if (options.previous !== undefined) return pruneDropped(options, options.previous);
  if (!options.list) return 0;
  const ownerNamespace = owner.metadata.namespace ?? '';
  let pruned = 0;
  for (const kind of options.kinds) {
    const namespaced = kind.scope === 'Namespaced';
    // a namespaced owner owns nothing cluster-scoped; a cluster-scoped one, in any namespace
    if (!namespaced && ownerNamespace !== '') continue;
    const objects = await options.lister.list(
      kind,
      namespaced && ownerNamespace !== '' ? ownerNamespace : undefined,
    );
    for (const object of objects) {
      const namespace = object.metadata.namespace ?? '';
      if (
        !isOurs(object, options) ||
        options.touched.has(ownedKey(kind, namespace, object.metadata.name)) ||
        !(await stillOurs(kind, namespace, object.metadata.name, options))
      )
        continue;
      fenced(options);
      const outcome = await deleteObject(
        options.client,
        kind,
        namespace,
        object.metadata.name,
        options.signal,
      );
      if (outcome !== 'absent') {
        pruned += 1;
        options.log.info(
          { kind: kind.kind, name: object.metadata.name, namespace },
          'pruned: owned object the reconcile no longer applies',
        );
      }
    }
  }
  return pruned;
}

/** Controlled by the owner and labelled by the operator: what it applied for that owner. */
function isOurs(
  object: KubeObject,
  options: { readonly owner: KubeObject; readonly controller: string },
): boolean {
  const controlled = (object.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.uid === options.owner.metadata.uid,
  );
  return controlled && object.metadata.labels?.[CONTROLLER_LABEL] === options.controller;
}

/**
 * Whether the apiserver's object is still what the bus says: this owner's and
 * this operator's. A record on the bus is only what someone allowed to
 * publish there said (a forged one would delete an admin's object), so the
 * object is read before it is deleted, as ctx.delete reads it (ADR 0037);
 * pruning is rare, a read per pruned object cheap.
 */
async function stillOurs(
  kind: Resource,
  namespace: string,
  name: string,
  options: Parameters<typeof pruneOwned>[0],
): Promise<boolean> {
  const live = await options.client.getIfExists<KubeObject>(
    objectPath(refOf(kind), namespace, name),
  );
  if (live !== undefined && isOurs(live, options)) return true;
  // gone already (collected, or the bus behind): nothing to prune, nothing to say
  if (live === undefined) return false;
  options.log.warn(
    { kind: kind.kind, name, namespace },
    "not pruned: the bus recorded it as this owner's child, the apiserver does not",
  );
  return false;
}

/** Deletes what the previous reconcile applied and this one did not: no list needed. */
async function pruneDropped(
  options: Parameters<typeof pruneOwned>[0],
  previous: ReadonlySet<string>,
): Promise<number> {
  let pruned = 0;
  for (const key of previous) {
    if (options.touched.has(key)) continue;
    const kind = options.kinds.find((candidate) =>
      key.startsWith(ownedKey(candidate, '', '').slice(0, -1)),
    );
    if (kind === undefined) continue; // a kind kept from pruning
    const [namespace = '', name = ''] = key
      .slice(`${kind.group}/${kind.plural}/`.length)
      .split('/');
    // still this owner's and this operator's: a person may have orphaned it since
    const current = await options.read({
      group: kind.group,
      resource: kind.plural,
      namespace,
      name,
    });
    if (current === undefined || !isOurs(current, options)) continue;
    if (!(await stillOurs(kind, namespace, name, options))) continue;
    fenced(options);
    if ((await deleteObject(options.client, kind, namespace, name, options.signal)) !== 'absent') {
      pruned += 1;
      options.log.info(
        { kind: kind.kind, name, namespace },
        'pruned: owned object the reconcile no longer applies',
      );
    }
  }
  return pruned;
}
