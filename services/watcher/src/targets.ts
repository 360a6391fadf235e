// What the watcher watches and whom it tells: each watched resource once, and
// for each change the controllers to mark dirty — the object's own controller
// when it is a primary, the owner's controller when it is owned (by its owner
// reference, or its kubebus.dev/owner annotation in another namespace), and the
// objects a controller's own mapping names when it watches the resource (for
// both, its previous state's answer too, mapped-marks.ts), or the primaries
// whose references name it (reference-index.ts).
import { controllerOf, type ChangeOp, type KubeObject } from '@kubebus/shared/events';
import {
  OWNER_ANNOTATION,
  isDns1123Subdomain,
  isNotFound,
  parseOwnerAnnotation,
  type KubeClient,
  type ObjectKey,
  type ResourceRef,
} from '@kubebus/shared/kube';
import type { ControllerSpec } from './config.js';
import { MappedMarks } from './mapped-marks.js';
import { guardedRefs } from './named-refs.js';
import { ReferenceIndex } from './reference-index.js';

export interface WatchedResource extends ResourceRef {
  readonly kind: string;
}

export interface Mark {
  readonly controller: string;
  readonly key: ObjectKey;
}

export interface WatchTargets {
  readonly resources: readonly WatchedResource[];
  /** controllers whose primary resource this is (resync marks their objects) */
  primaryOf(resource: WatchedResource): readonly string[];
  /**
   * Only owned, by every controller that names it: its objects matter only as
   * kubebus' own children, so only those (labelled managed-by kubebus) are watched.
   */
  ownedOnly(resource: WatchedResource): boolean;
  /**
   * The work marks a change to `object` of `resource` makes. For its
   * controller owner and `map` watches, what the object's previous state
   * named too: this state's answer is remembered for its next change.
   */
  marksFor(resource: WatchedResource, object: KubeObject, op: ChangeOp): Mark[];
  /**
   * An object as last recorded (KUBEBUS_EVENTS, at start): its controller
   * owner and what `map` watches name for it are remembered, so its first
   * change marks those too.
   */
  recall(resource: WatchedResource, object: KubeObject): void;
  /** whether the primaries of `resource` are indexed by what they reference (listed at start) */
  indexes(resource: WatchedResource): boolean;
  /**
   * A primary seen as it is now (listed at start, or changed), or gone: what
   * it references is indexed (`references` watches).
   */
  observe(resource: WatchedResource, object: KubeObject, op: 'add' | 'update' | 'delete'): void;
}

/** A `references` watch: its index, filled from the primaries, read on changes of `watched`. */
interface IndexedWatch {
  readonly controller: string;
  readonly primary: WatchedResource;
  readonly watched: WatchedResource;
  readonly index: ReferenceIndex;
}

/** Parses "resource.version.group" into its parts. */
export function parseResourceName(name: string): {
  group: string;
  version: string;
  resource: string;
} {
  const [resource = '', version = '', ...group] = name.split('.');
  return { resource, version, group: group.join('.') };
}

/**
 * A resource the apiserver does not serve (yet): a release deployed before the
 * CRD that defines its version, as the upgrade order has it (docs/operators.md),
 * or a CRD not installed. Waited for; said in one line.
 */
export class NotServedError extends Error {
  override readonly name = 'NotServedError';
  constructor(resource: string, path: string) {
    super(
      `the apiserver does not serve ${resource} (${path}) yet: apply the CRD that defines it (an upgrade's new version: step 4 of docs/operators.md's "Adding a version")`,
    );
  }
}

interface ApiResourceList {
  resources?: { name: string; namespaced: boolean; kind: string }[];
}

/** Asks the apiserver's discovery for each resource's kind and scope. */
export async function discoverTargets(
  client: KubeClient,
  controllers: readonly ControllerSpec[],
): Promise<WatchTargets> {
  const resources = new Map<string, WatchedResource>();
  const discover = async (name: string): Promise<WatchedResource> => {
    const known = resources.get(name);
    if (known) return known;
    const { group, version, resource } = parseResourceName(name);
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const list = await client.request<ApiResourceList>(path).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
      throw new NotServedError(name, path);
    });
    const found = list.resources?.find((r) => r.name === resource);
    if (!found) throw new NotServedError(name, path);
    const watched = { group, version, resource, namespaced: found.namespaced, kind: found.kind };
    resources.set(name, watched);
    return watched;
  };

  const primaries = new Map<WatchedResource, string[]>();
  const owned = new Set<WatchedResource>();
  const ownersByKind = new Map<string, OwnerWatch[]>();
  const mappings = new Map<WatchedResource, MapWatch[]>();
  const indexed: IndexedWatch[] = [];
  for (const spec of controllers) {
    const primary = await discover(spec.for);
    primaries.set(primary, [...(primaries.get(primary) ?? []), spec.name]);
    const ownerKind = `${primary.group}/${primary.kind}`;
    ownersByKind.set(ownerKind, [
      ...(ownersByKind.get(ownerKind) ?? []),
      { controller: spec.name, primary },
    ]);
    for (const name of spec.owns) owned.add(await discover(name));
    for (const watch of spec.watches ?? []) {
      const watched = await discover(watch.resource);
      if ('references' in watch) {
        const index = new ReferenceIndex(watched.namespaced, (object) => watch.references(object));
        indexed.push({ controller: spec.name, primary, watched, index });
        continue;
      }
      mappings.set(watched, [
        ...(mappings.get(watched) ?? []),
        { controller: spec.name, primary, map: (object: KubeObject) => watch.map(object) },
      ]);
    }
  }

  const mapped = new Map<WatchedResource, MappedMarks>();
  for (const resource of resources.values()) {
    const watches = mappings.get(resource) ?? [];
    mapped.set(
      resource,
      new MappedMarks((object) => [
        ...ownerMarks(ownersByKind, object),
        ...mapMarks(watches, object),
      ]),
    );
  }

  return {
    resources: [...resources.values()],
    primaryOf: (resource) => primaries.get(resource) ?? [],
    ownedOnly: (resource) =>
      owned.has(resource) &&
      !primaries.has(resource) &&
      !mappings.has(resource) &&
      !indexed.some((watch) => watch.watched === resource),
    indexes: (resource) => indexed.some((watch) => watch.primary === resource),
    observe(resource, object, op) {
      for (const { primary, index } of indexed) {
        if (primary !== resource) continue;
        if (op === 'delete') index.remove(object.metadata.namespace ?? '', object.metadata.name);
        else index.update(object);
      }
    },
    recall(resource, object) {
      mapped.get(resource)?.recall(object);
    },
    marksFor(resource, object, op) {
      const namespace = object.metadata.namespace ?? '';
      const marks: Mark[] = (primaries.get(resource) ?? []).map((controller) => ({
        controller,
        key: {
          group: resource.group,
          resource: resource.resource,
          namespace,
          name: object.metadata.name,
        },
      }));
      marks.push(...(mapped.get(resource)?.change(object, op) ?? []));
      for (const { controller, primary, watched, index } of indexed) {
        if (watched !== resource) continue;
        for (const referrer of index.referrers(
          watched.namespaced ? namespace : '',
          object.metadata.name,
        ))
          marks.push({
            controller,
            key: {
              group: primary.group,
              resource: primary.resource,
              namespace: referrer.namespace,
              name: referrer.name,
            },
          });
      }
      return marks;
    },
  };
}

/** A controller whose primary is of a kind owner references name. */
interface OwnerWatch {
  readonly controller: string;
  readonly primary: WatchedResource;
}

/** The primary one state of an object names by its controller owner reference, per controller of its kind. */
function ownerMarks(
  ownersByKind: ReadonlyMap<string, readonly OwnerWatch[]>,
  object: KubeObject,
): Mark[] {
  const owner = controllerOf(object);
  if (owner === undefined) return annotatedOwnerMarks(ownersByKind, object);
  // the apiserver asks only for a non-empty name: one no object can have owns
  // nothing, and is not kept (a megabyte of name on every ConfigMap would be)
  if (!isDns1123Subdomain(owner.name)) return [];
  const namespace = object.metadata.namespace ?? '';
  const ownerGroup = owner.apiVersion.includes('/') ? (owner.apiVersion.split('/')[0] ?? '') : '';
  const marks: Mark[] = [];
  for (const { controller, primary } of ownersByKind.get(`${ownerGroup}/${owner.kind}`) ?? []) {
    // An owner reference names no namespace: a namespaced owner lives in its
    // child's namespace, a cluster-scoped one in none. A cluster-scoped child
    // cannot have a namespaced owner (the garbage collector refuses it too).
    if (primary.namespaced && namespace === '') continue;
    marks.push({
      controller,
      key: {
        group: primary.group,
        resource: primary.resource,
        namespace: primary.namespaced ? namespace : '',
        name: owner.name,
      },
    });
  }
  return marks;
}

/**
 * The namespaced primary a child beyond an owner reference's reach (another
 * namespace) names by its kubebus.dev/owner annotation, per controller of its kind.
 */
function annotatedOwnerMarks(
  ownersByKind: ReadonlyMap<string, readonly OwnerWatch[]>,
  object: KubeObject,
): Mark[] {
  const annotations = object.metadata['annotations'] as Record<string, string> | undefined;
  const owner = parseOwnerAnnotation(annotations?.[OWNER_ANNOTATION]);
  if (owner === undefined) return [];
  return (ownersByKind.get(`${owner.group}/${owner.kind}`) ?? [])
    .filter(({ primary }) => primary.namespaced)
    .map(({ controller, primary }) => ({
      controller,
      key: {
        group: primary.group,
        resource: primary.resource,
        namespace: owner.namespace,
        name: owner.name,
      },
    }));
}

/** A `map` watch: the controller, its primary, and what names the primaries from a changed object. */
interface MapWatch {
  readonly controller: string;
  readonly primary: WatchedResource;
  readonly map: (object: KubeObject) => unknown;
}

/** What the `map` watches of a resource name for one state of an object. */
function mapMarks(watches: readonly MapWatch[], object: KubeObject): Mark[] {
  const namespace = object.metadata.namespace ?? '';
  const marks: Mark[] = [];
  for (const { controller, primary, map } of watches) {
    for (const ref of guardedRefs(() => map(object))) {
      const at = primary.namespaced ? (ref.namespace ?? namespace) : '';
      // a namespaced primary named from a cluster-scoped object needs its namespace said
      if (primary.namespaced && at === '') continue;
      marks.push({
        controller,
        key: { group: primary.group, resource: primary.resource, namespace: at, name: ref.name },
      });
    }
  }
  return marks;
}
