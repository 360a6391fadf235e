// An operator: which resource it reconciles, what it owns and watches, and
// the reconcile function. Every process that runs it (`kubebus run`) derives
// its controller name, partitions, watches and RBAC from this one value.
import type { NatsConnection } from '@nats-io/nats-core';
import type { ConditionStatus, DesiredObject, ObjectRef, ResourceObject } from './objects.js';
import { resourceName, type CustomResource, type Resource } from './resource.js';

type ObjectOf<R extends Resource> = R extends Resource<infer Shape> ? Shape : never;
type StatusOf<R extends CustomResource> = NonNullable<ObjectOf<R>['status']>;

/** A condition a reconcile reports; lastTransitionTime and observedGeneration are the runtime's. */
export interface ConditionReport {
  readonly type: string;
  readonly status: ConditionStatus | boolean;
  readonly reason: string;
  readonly message?: string;
}

/** What a reconcile returns. Nothing means: reconciled, Ready=True, no requeue. */
export interface ReconcileResult<Status> {
  /** the status to show (parsed by the resource's status schema); default: unchanged */
  readonly status?: Omit<Status, 'conditions' | 'observedGeneration'>;
  /** the Ready condition; default True with reason Reconciled */
  readonly ready?: Omit<ConditionReport, 'type'>;
  /** further conditions of your own */
  readonly conditions?: readonly ConditionReport[];
  /** reconcile again after this many milliseconds even when nothing changes */
  readonly requeueAfterMs?: number;
}

export interface Log {
  debug(fields: object, message?: string): void;
  debug(message: string): void;
  info(fields: object, message?: string): void;
  info(message: string): void;
  warn(fields: object, message?: string): void;
  warn(message: string): void;
  error(fields: object, message?: string): void;
  error(message: string): void;
}

/** What the host gives an operator's `setup`: the bus it runs on. */
export interface OperatorHost {
  /** the NATS connection of this process (object stores, KV: external state on the bus) */
  readonly nats: NatsConnection;
  /** replicas of kubebus' streams (1 on one server, 3 in a NATS cluster) */
  readonly streamReplicas: number;
  readonly log: Log;
}

/** What a reconcile can do besides computing a status. */
export interface ReconcileContext<Deps = undefined> {
  /**
   * Server-side apply of an object this operator owns (declared in `owns`):
   * the namespace defaults to the primary object's, the controller owner
   * reference is set, the field manager is the operator's. An apply that
   * would change nothing is not sent.
   */
  apply(object: DesiredObject): Promise<void>;
  /** Creates the object unless it exists (generated credentials, say); never updates it. */
  createOnce(object: DesiredObject): Promise<'created' | 'exists'>;
  /**
   * An object of a resource this operator reconciles, owns or watches, as last
   * recorded on the bus: no apiserver request. undefined when it does not exist.
   */
  get<R extends Resource>(
    resource: R,
    name: string,
    namespace?: string,
  ): Promise<ObjectOf<R> | undefined>;
  /** Records a Kubernetes Event about the object being reconciled. */
  event(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
  readonly log: Log;
  /** aborted when the process stops or loses this object's partition */
  readonly signal: AbortSignal;
  /** 1 on the first try, then counts retries */
  readonly attempt: number;
  /** the W3C traceparent of this reconcile */
  readonly traceparent: string;
  /**
   * true under `kubebus replay`: apiserver writes are sent as dry runs and
   * statuses are compared, not written; touch nothing outside Kubernetes
   */
  readonly dryRun: boolean;
  /** what the operator's `setup` returned, made once per process */
  readonly deps: Deps;
}

export interface Watch<Primary extends CustomResource> {
  readonly resource: Resource;
  /** which objects of the primary resource a change to `object` concerns */
  map(object: ResourceObject): readonly ObjectRef[];
  /** never set: ties the mapping to the operator's primary resource */
  readonly __primary?: Primary;
}

/** What the status shows while the spec is invalid, besides Ready=False/InvalidSpec. */
export interface InvalidSpecReport<Status> {
  readonly status?: Partial<Omit<Status, 'conditions' | 'observedGeneration'>>;
  readonly conditions?: readonly ConditionReport[];
}

export interface OperatorDefinition<Primary extends CustomResource, Deps = undefined> {
  /** the controller's name: lower-case letters, digits and '-' */
  readonly name: string;
  /** the resource it reconciles */
  readonly for: Primary;
  /** resources whose objects it creates (their changes reconcile the owner) */
  readonly owns?: readonly Resource[];
  /** other resources whose changes reconcile the objects `map` names */
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
   * goes; with it, the runtime keeps a finalizer on every object.
   */
  finalize?(object: ObjectOf<Primary>, context: ReconcileContext<Deps>): Promise<void>;
  /** default: <group>/<name>; set it to keep the finalizer objects already carry */
  readonly finalizer?: string;
  /** clients for external resources, made once per process; `ctx.deps` in reconcile */
  setup?(host: OperatorHost): Deps | Promise<Deps>;
  /** what else the status says while the spec is invalid (a phase, a condition) */
  invalidSpec?(message: string): InvalidSpecReport<NoInfer<StatusOf<Primary>>>;
  /** how the work is split between replicas (default 16); fixed once deployed */
  readonly partitions?: number;
  /** failed attempts before an object is dead-lettered (default 10) */
  readonly maxAttempts?: number;
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
  const partitions = definition.partitions ?? 16;
  check(
    Number.isInteger(partitions) && partitions >= 1 && partitions <= 1024,
    'partitions must be 1-1024',
  );
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
