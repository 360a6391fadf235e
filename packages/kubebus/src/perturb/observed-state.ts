// What a run is judged by: the state of the run's one object and of
// everything the operator made for it (in its namespace, or, for a
// cluster-scoped object, wherever its controller reference points to it),
// with what differs between two runs of the same workload for reasons of no
// concern removed (the run's own names, uids, resourceVersions, times,
// allocated IPs, generated Secret values, Event names) — also where the
// operator copied one into a field (a status that records the resourceVersion
// of a ConfigMap it read): such a value is named for what it is.
import {
  collectionPath,
  diff,
  formatChange,
  objectPath,
  type KubeClient,
} from '@kubebus/shared/kube';
import type { Operator, Resource, ResourceObject } from '@kubebus/shared/definition';
import { generalized, type Place } from './place.js';

const CONTROLLER_LABEL = 'kubebus.dev/controller';

export interface ObservedState {
  /** the object, or null once it is gone */
  readonly primary: {
    readonly spec: unknown;
    readonly finalizers: readonly string[];
    readonly status: unknown;
    readonly deleting: boolean;
  } | null;
  /** generation and observedGeneration, apart: they are compared with each other, not across runs */
  readonly generations: {
    readonly generation: number;
    readonly observed: number | undefined;
  } | null;
  /** kind/name → the object's relevant fields */
  readonly owned: Readonly<Record<string, unknown>>;
  /** Event reason → how many the operator recorded about the object (a Warning: 1 if any) */
  readonly events: Readonly<Record<string, number>>;
  /** declared external call (ctx.once) → how many times it was made, as the recording counted */
  readonly effects?: Readonly<Record<string, number>>;
}

function refOf(resource: Resource) {
  return {
    group: resource.group,
    version: resource.version,
    resource: resource.plural,
    namespaced: resource.scope === 'Namespaced',
  };
}

/** A condition without its time and generation. */
function conditionOf(condition: Record<string, unknown>): unknown {
  const { lastTransitionTime: _time, observedGeneration: _generation, ...rest } = condition;
  return rest;
}

function statusOf(status: unknown): unknown {
  if (typeof status !== 'object' || status === null) return status ?? null;
  const {
    observedGeneration: _generation,
    conditions,
    ...rest
  } = status as Record<string, unknown>;
  const list = Array.isArray(conditions) ? (conditions as Record<string, unknown>[]) : [];
  return {
    ...rest,
    conditions: list
      .map(conditionOf)
      .sort((a, b) =>
        String((a as { type?: string }).type).localeCompare(String((b as { type?: string }).type)),
      ),
  };
}

/** Annotations other controllers set (a Deployment's revision) say nothing of this operator. */
function ownAnnotations(annotations: Record<string, string> | undefined) {
  const kept = Object.entries(annotations ?? {}).filter(([key]) => !key.includes('kubernetes.io/'));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** A list's items carry no kind: it is the resource's. */
function ownedOf(kind: string, object: ResourceObject): unknown {
  const {
    metadata,
    status: _status,
    apiVersion: _apiVersion,
    kind: _kind,
    ...fields
  } = object as ResourceObject & Record<string, unknown>;
  const meta = metadata as ResourceObject['metadata'] & {
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
    finalizers?: string[];
  };
  const relevant: Record<string, unknown> = { ...fields };
  if (kind === 'Secret') {
    // generated credentials differ between runs: which keys, not their values
    for (const field of ['data', 'stringData'])
      if (relevant[field] !== undefined)
        relevant[field] = Object.keys(relevant[field] as object).sort();
  }
  if (kind === 'Service' && typeof relevant['spec'] === 'object' && relevant['spec'] !== null) {
    const {
      clusterIP: _ip,
      clusterIPs: _ips,
      ...spec
    } = relevant['spec'] as Record<string, unknown>;
    relevant['spec'] = spec;
  }
  return {
    labels: meta.labels ?? {},
    annotations: ownAnnotations(meta.annotations),
    finalizers: meta.finalizers ?? [],
    owners: (meta.ownerReferences ?? []).map(
      (ref) => `${ref.kind}/${ref.name}${ref.controller === true ? ' (controller)' : ''}`,
    ),
    ...relevant,
  };
}

interface EventList {
  readonly items: readonly {
    readonly reason?: string;
    readonly type?: string;
    readonly reportingController?: string;
    readonly regarding?: { readonly name?: string; readonly kind?: string };
  }[];
}

/** What observe reads, as the apiserver answered it. */
export interface RawState {
  readonly object: ResourceObject | undefined;
  /** kind → the objects of that kind labelled with the operator's name (in the run's namespace, or anywhere) */
  readonly owned: Readonly<Record<string, readonly ResourceObject[]>>;
  readonly events: EventList['items'];
  /**
   * The run's own identifiers the operator may have copied into a field,
   * each with what it names (`<resourceVersion of ConfigMap/settings>`): the
   * fixtures' as the run applied them (every revision)
   */
  readonly identifiers?: ReadonlyMap<string, string>;
}

/**
 * The uid and resourceVersion of `object`, as the names they are compared by;
 * `revision` tells a fixture's revisions apart (a status that shows an older
 * one is a stale read, not the same state).
 */
export function identifiersOf(
  kind: string,
  object: ResourceObject,
  revision?: number,
): [string, string][] {
  const { name, uid, resourceVersion } = object.metadata;
  const which = revision === undefined ? '' : ` revision ${String(revision)}`;
  return [
    [uid, `<uid of ${kind}/${name}>`],
    [resourceVersion, `<resourceVersion of ${kind}/${name}${which}>`],
  ];
}

/**
 * A time written by the operator (an issued-at, an expiry) is the clock's:
 * two runs started apart never agree on it, as on a condition's
 * lastTransitionTime. That there is one is compared, not when.
 */
const RFC3339_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const A_TIME = '<a time>';

/** Every string in `value` that is one of the identifiers or a time, named for what it is. */
function named<T>(value: T, identifiers: ReadonlyMap<string, string>): T {
  const replace = (item: unknown): unknown => {
    if (typeof item === 'string')
      return identifiers.get(item) ?? (RFC3339_TIME.test(item) ? A_TIME : item);
    if (Array.isArray(item)) return item.map(replace);
    if (typeof item === 'object' && item !== null)
      return Object.fromEntries(Object.entries(item).map(([key, field]) => [key, replace(field)]));
    return item;
  };
  return replace(value) as T;
}

/** Whether the object's controller reference names the run's object (its uid changes between lives). */
function controlledBy(object: ResourceObject, kind: string, name: string): boolean {
  return (object.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === kind && ref.name === name,
  );
}

export async function observe(
  client: KubeClient,
  operator: Operator,
  place: Place,
  identifiers?: ReadonlyMap<string, string>,
): Promise<ObservedState> {
  const object = await client.getIfExists<ResourceObject>(
    objectPath(refOf(operator.for), place.namespace, place.name),
  );
  const owned: Record<string, ResourceObject[]> = {};
  for (const kind of operator.owns ?? []) {
    // a cluster-scoped object's children may be anywhere: every namespace, then those it controls
    const list = await client.request<{ items: ResourceObject[] }>(
      collectionPath(refOf(kind), place.namespace),
      { query: { labelSelector: `${CONTROLLER_LABEL}=${operator.name}` } },
    );
    owned[kind.kind] = list.items;
  }
  // Events about a cluster-scoped object are recorded in "default", as kubectl and client-go do
  const events = await client.request<EventList>(
    `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(place.namespace || 'default')}/events`,
  );
  return stateOf(operator, place, {
    object,
    owned,
    events: events.items,
    ...(identifiers === undefined ? {} : { identifiers }),
  });
}

/** Whether what holds an object being deleted is Kubernetes' own (garbage collection, protection). */
function onlyKubernetesFinalizers(item: ResourceObject): boolean {
  const finalizers = (item.metadata as { finalizers?: readonly string[] }).finalizers ?? [];
  return finalizers.every(
    (finalizer) =>
      finalizer === 'foregroundDeletion' ||
      finalizer === 'orphan' ||
      // kubernetes.io/pvc-protection, kubernetes.io/pv-protection, …
      finalizer.startsWith('kubernetes'),
  );
}

/** An owned object's key: Kind/name, with its namespace when the run's object is cluster-scoped. */
function ownedKeyOf(place: Pick<Place, 'namespaced'>, kind: string, item: ResourceObject): string {
  const { name, namespace } = item.metadata;
  return place.namespaced || namespace === undefined || namespace === ''
    ? `${kind}/${name}`
    : `${kind}/${namespace}/${name}`;
}

/** The state, without what differs between runs for reasons of no concern. */
export function stateOf(
  operator: Pick<Operator, 'name' | 'for'>,
  place: Pick<Place, 'name' | 'namespaced' | 'general'>,
  raw: RawState,
): ObservedState {
  const { object } = raw;
  // the run's own objects' identifiers, and the fixtures'
  const identifiers = new Map(raw.identifiers);
  if (object !== undefined)
    for (const [value, name] of identifiersOf(operator.for.kind, object))
      identifiers.set(value, name);
  const mine: [string, ResourceObject][] = [];
  for (const [kind, items] of Object.entries(raw.owned))
    for (const item of items)
      // being deleted counts as gone: a pruned Namespace may take a while to go, and one
      // run's state may be taken before, another's after — unless a finalizer not Kubernetes'
      // own holds it (a leak the run should show)
      if (item.metadata.deletionTimestamp !== undefined && onlyKubernetesFinalizers(item)) continue;
      // anywhere in the cluster: only what the run's object controls is the run's
      else if (place.namespaced || controlledBy(item, operator.for.kind, place.name)) {
        mine.push([kind, item]);
        for (const [value, name] of identifiersOf(kind, item)) identifiers.set(value, name);
      }
  const owned: Record<string, unknown> = {};
  for (const [kind, item] of mine)
    owned[ownedKeyOf(place, kind, item)] = named(ownedOf(kind, item), identifiers);
  const events: Record<string, number> = {};
  for (const event of raw.events)
    if (
      event.reportingController === `kubebus.dev/${operator.name}` &&
      event.regarding?.kind === operator.for.kind &&
      event.regarding.name === place.name
    )
      // a Normal Event announces something done: once, so each one counts; a Warning
      // reports a condition every reconcile that meets it may report again (more
      // reconciles under a perturbation, more Warnings): whether it was reported counts
      if (event.type === 'Warning') events[`${event.reason ?? ''} (Warning)`] = 1;
      else events[event.reason ?? ''] = (events[event.reason ?? ''] ?? 0) + 1;
  const meta = object?.metadata as
    (ResourceObject['metadata'] & { finalizers?: string[] }) | undefined;
  return generalized(place, {
    primary:
      object === undefined || meta === undefined
        ? null
        : {
            spec: object['spec'] ?? null,
            finalizers: meta.finalizers ?? [],
            status: named(statusOf(object['status']), identifiers),
            deleting: meta.deletionTimestamp !== undefined,
          },
    generations:
      meta === undefined
        ? null
        : {
            generation: meta.generation ?? 0,
            observed: (object?.['status'] as { observedGeneration?: number } | undefined)
              ?.observedGeneration,
          },
    owned,
    events,
  });
}

type Counts = Readonly<Record<string, number>>;

/** The differences that matter, one line each ("" none): what the oracle reports. */
export function differences(expected: ObservedState, actual: ObservedState): string[] {
  const lines: string[] = [];
  const compare = (what: string, a: unknown, b: unknown) => {
    for (const change of diff(a, b))
      lines.push(`${what}${change.path === '' ? '' : '.'}${formatChange(change)}`);
  };
  if ((expected.primary === null) !== (actual.primary === null))
    lines.push(expected.primary === null ? 'the object still exists' : 'the object is gone');
  else compare('object', expected.primary, actual.primary);
  for (const key of new Set([...Object.keys(expected.owned), ...Object.keys(actual.owned)])) {
    if (!(key in actual.owned)) lines.push(`${key}: missing`);
    else if (!(key in expected.owned))
      lines.push(`${key}: not in the reference (left behind or extra)`);
    else compare(key, expected.owned[key], actual.owned[key]);
  }
  const counted = (what: string, want: Counts, got: Counts) => {
    for (const name of new Set([...Object.keys(want), ...Object.keys(got)]))
      if ((want[name] ?? 0) !== (got[name] ?? 0))
        lines.push(`${what} ${name}: ${want[name] ?? 0} in the reference, ${got[name] ?? 0} here`);
  };
  counted('Event', expected.events, actual.events);
  counted('Effect', expected.effects ?? {}, actual.effects ?? {});
  return lines;
}

/**
 * The side effects made more often than in the reference, one line each, as
 * `differences` words them. Counts only grow (an Event recorded, a call
 * made), so such a difference never goes away: there is no use waiting on it.
 */
export function repeated(expected: ObservedState, actual: ObservedState): string[] {
  const lines: string[] = [];
  const over = (what: string, want: Counts, got: Counts) => {
    for (const [name, count] of Object.entries(got))
      if (count > (want[name] ?? 0))
        lines.push(`${what} ${name}: ${want[name] ?? 0} in the reference, ${count} here`);
  };
  over('Event', expected.events, actual.events);
  over('Effect', expected.effects ?? {}, actual.effects ?? {});
  return lines;
}

/** Whether the status says the spec as it is now was reconciled. */
export function generationObserved(state: ObservedState): boolean {
  return state.generations === null || state.generations.observed === state.generations.generation;
}
