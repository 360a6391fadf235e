// An operator: which resource it reconciles, what it owns and watches, and
// the reconcile function. Every process that runs it (`kubebus run`) derives
// its controller name, partitions, watches and RBAC from this one value.
import type { NatsConnection } from '@nats-io/nats-core';
import type { Log, ReconcileContext } from './context.js';
import type { ObjectRef, ResourceObject } from './objects.js';
import { checkRbac, type OperatorRbac } from './rbac.js';
import { resourceName, type CustomResource, type ObjectOf, type Resource } from './resource.js';
import type { FinalizeResult, InvalidSpecReport, ReconcileResult } from './result.js';

type StatusOf<R extends CustomResource> = NonNullable<ObjectOf<R>['status']>;

/** What the host gives an operator's `setup`: the bus it runs on. */
export interface OperatorHost {
  /** the NATS connection of this process (object stores, KV: external state on the bus) */
  readonly nats: NatsConnection;
  /** replicas of kubebus' streams (1 on one server, 3 in a NATS cluster) */
  readonly streamReplicas: number;
  readonly log: Log;
}

/**
 * Another resource whose changes reconcile primaries: which ones, said either
 * from the changed object (`map`) or from each primary (`references`).
 */
export type Watch<Primary extends CustomResource> = MappedWatch<Primary> | ReferencedWatch<Primary>;

/** The changed object says which primaries it concerns (a label naming its primary, say). */
export interface MappedWatch<Primary extends CustomResource> {
  readonly resource: Resource;
  /** which objects of the primary resource a change to `object` concerns */
  map(object: ResourceObject): readonly ObjectRef[];
  readonly references?: never;
  /** never set: ties the mapping to the operator's primary resource */
  readonly __primary?: Primary;
}

/**
 * Each primary says which objects of `resource` it refers to (a Secret named in
 * its spec): the watcher keeps the index, as controller-runtime's field
 * indexers do, and a change to one of them reconciles every primary naming it.
 */
export interface ReferencedWatch<Primary extends CustomResource> {
  readonly resource: Resource;
  /**
   * The objects of `resource` this primary refers to; namespace default: the
   * primary's. Given the primary with its spec parsed (defaults applied); a
   * primary whose spec is invalid refers to nothing.
   */
  references(primary: ObjectOf<Primary>): readonly ObjectRef[];
  readonly map?: never;
  readonly __primary?: Primary;
}

export interface OperatorDefinition<Primary extends CustomResource, Deps = undefined> {
  /** the controller's name: lower-case letters, digits and '-' */
  readonly name: string;
  /** the resource it reconciles */
  readonly for: Primary;
  /** resources whose objects it creates (their changes reconcile the owner) */
  readonly owns?: readonly Resource[];
  /** other resources whose changes reconcile primaries (those `map` or `references` names) */
  readonly watches?: readonly Watch<Primary>[];
  /** make the actual state match the spec; throw to retry with backoff */
  reconcile(
    object: ObjectOf<Primary>,
    context: ReconcileContext<Deps>,
    // `async reconcile() { ... }` with no return is Promise<void>: allowed, it means "reconciled"
    // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
  ): Promise<ReconcileResult<NoInfer<StatusOf<Primary>>> | undefined | void>;
  /**
   * Clean up what Kubernetes cannot (external resources) before the object
   * goes; with it, the runtime keeps a finalizer on every object. Return
   * `{ requeueAfterMs }` when the cleanup is not done yet (a child still
   * terminating): the finalizer stays and finalize runs again then, with no
   * attempt counted (with `message` and `status`, what it waits for shows on
   * the object); throw to retry with backoff.
   */
  finalize?(
    object: ObjectOf<Primary>,
    context: ReconcileContext<Deps>,
    // `async finalize() { ... }` with no return is Promise<void>: allowed, it means "cleaned up"
    // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
  ): Promise<FinalizeResult<NoInfer<StatusOf<Primary>>> | undefined | void>;
  /**
   * Pruning (default true): after a successful reconcile, owned objects
   * (kinds in `owns`, with this object as their controller owner) that the
   * reconcile did not apply or createOnce are deleted, as `kubectl apply
   * --prune` does. false turns it off; `{ keep: [kinds.Secret] }` never prunes
   * those kinds. Never on a failed reconcile, never under replay.
   */
  readonly prune?: boolean | { readonly keep: readonly Resource[] };
  /** default: <group>/<name>; set it to keep the finalizer objects already carry */
  readonly finalizer?: string;
  /** clients for external resources, made once per process; `ctx.deps` in reconcile */
  setup?(host: OperatorHost): Deps | Promise<Deps>;
  /** what else the status says while the spec is invalid (a phase, a condition) */
  invalidSpec?(message: string): InvalidSpecReport<NoInfer<StatusOf<Primary>>>;
  /**
   * How the work is split between replicas (default 4: at most 4 reconcilers share it).
   * Each partition is a durable consumer the server keeps busy; changing the count
   * needs every process of the operator stopped first (docs/operators.md).
   */
  readonly partitions?: number;
  /** failed attempts before an object is dead-lettered (default 10) */
  readonly maxAttempts?: number;
  /** deaths of its process blamed on one object before it is dead-lettered (default 5, ADR 0022) */
  readonly maxCrashes?: number;
  /** RBAC beyond what for/owns/watches imply: roles it binds or escalates, extra rules */
  readonly rbac?: OperatorRbac;
}

export interface Operator<
  Primary extends CustomResource = CustomResource,
  Deps = unknown,
> extends OperatorDefinition<Primary, Deps> {
  readonly kubebus: 'operator/v1';
  /** the finalizer the runtime sets when `finalize` is defined */
  readonly finalizer: string;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new TypeError(`defineOperator: ${what}`);
}

/**
 * Work partitions of an operator that declares none. Few: every partition is a
 * durable consumer whose state nats-server writes up to 10 times a second while
 * it is busy (ADR 0001, 2026-12-04).
 */
export const DEFAULT_PARTITIONS = 4;

/** An operator for `kubebus run`, `kubebus generate`, `kubebus replay` and the test kit. */
export function defineOperator<Primary extends CustomResource, Deps = undefined>(
  definition: OperatorDefinition<Primary, Deps>,
): Operator<Primary, Deps> {
  check(
    /^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$/.test(definition.name),
    `name "${definition.name}" must be 1-40 lower-case letters, digits and '-'`,
  );
  check(
    typeof definition.for === 'object' && 'definition' in definition.for,
    '`for` must be a resource made by defineResource',
  );
  const partitions = definition.partitions ?? DEFAULT_PARTITIONS;
  check(
    Number.isInteger(partitions) && partitions >= 1 && partitions <= 1024,
    'partitions must be 1-1024',
  );
  for (const [index, watch] of (definition.watches ?? []).entries())
    check(
      (typeof watch.map === 'function') !== (typeof watch.references === 'function'),
      `watches[${index}] (${watch.resource.kind}) needs either map or references, not both`,
    );
  // Kubernetes refuses an owner reference from a cluster-scoped object to a
  // namespaced owner: such an object would be neither pruned, collected nor
  // mapped back to its owner (controller-runtime refuses it the same way)
  if (definition.for.scope === 'Namespaced')
    for (const owned of definition.owns ?? [])
      check(
        owned.scope === 'Namespaced',
        `${definition.for.kind} is namespaced, so it cannot own ${owned.kind} objects (cluster-scoped: Kubernetes refuses an owner reference from them to a namespaced owner); make ${definition.for.kind} cluster-scoped, or keep ${owned.kind} out of owns`,
      );
  if (definition.rbac !== undefined) checkRbac(definition.rbac, definition.owns ?? []);
  return Object.freeze({
    ...definition,
    kubebus: 'operator/v1' as const,
    finalizer: definition.finalizer ?? `${definition.for.group}/${definition.name}`,
  });
}

export function isOperator(value: unknown): value is Operator {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kubebus?: unknown }).kubebus === 'operator/v1'
  );
}

/** Every resource the operator names (for, owns, watches), once each. */
export function declaredResources(operator: Operator): Resource[] {
  const all = [
    operator.for,
    ...(operator.owns ?? []),
    ...(operator.watches ?? []).map((watch) => watch.resource),
  ];
  return [...new Map(all.map((resource) => [resourceName(resource), resource])).values()];
}
