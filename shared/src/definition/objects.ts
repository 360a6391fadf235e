// The shapes of the objects an operator reads and writes. Only what kubebus
// relies on is typed; everything else passes through.

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean | undefined;
  readonly blockOwnerDeletion?: boolean | undefined;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string | undefined;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation?: number | undefined;
  readonly creationTimestamp?: string | undefined;
  readonly deletionTimestamp?: string | undefined;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly finalizers?: readonly string[] | undefined;
  readonly ownerReferences?: readonly OwnerReference[] | undefined;
}

/** Any object as kubebus recorded it (Secrets are recorded without their data). */
export interface ResourceObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
  readonly [field: string]: unknown;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition as Kubernetes API conventions define it. */
export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
}

/** The status fields the runtime keeps for every custom resource. */
export interface RuntimeStatus {
  readonly observedGeneration?: number;
  readonly conditions?: readonly Condition[];
}

/** An object of a custom resource: its spec parsed by the resource's zod schema. */
export interface KubeObjectOf<Spec, Status> extends ResourceObject {
  readonly spec: Spec;
  readonly status?: Partial<Status> & RuntimeStatus;
}

/** The metadata an applied object may set: at least a name; the namespace defaults to the owner's. */
// (type aliases, not interfaces: bodies typed by kind must fit the untyped shapes)
export type DesiredMeta = {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
};

/** What the untyped `ctx.apply(object)` takes: any object of a declared kind. */
export interface DesiredObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: DesiredMeta;
  readonly [field: string]: unknown;
}

/** The body of `ctx.apply(resource, body)` for a resource typed no further (apiVersion and kind come from it). */
export type DesiredBody = {
  readonly metadata: DesiredMeta;
  readonly [field: string]: unknown;
};

/** The body of `ctx.apply(resource, body)` for a custom resource: its spec, as its schema takes it. */
export type CustomBody<SpecInput> = {
  readonly metadata: DesiredMeta;
  readonly spec: SpecInput;
};

/** Which object of the primary resource to reconcile (a `watches` mapping's answer). */
export interface ObjectRef {
  readonly name: string;
  /** default: the namespace of the watched object */
  readonly namespace?: string;
}
