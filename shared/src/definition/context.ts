// What a reconcile gets besides the object: the runtime's part (cancellation,
// a logger, the ids of this try), which every reconciler has, and what an
// operator's reconcile can do on top of it (apply, get, Events).
import type { DesiredObject, ResourceObject } from './objects.js';
import type { BodyOf, ObjectOf, Resource } from './resource.js';

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

/** What the runtime gives every reconcile, an operator's or a role's own (the status writer). */
export interface RuntimeContext {
  /** aborted when the process stops or loses this object's partition */
  readonly signal: AbortSignal;
  /**
   * Throws (and aborts `signal`) when the reconcile may no longer act: called
   * right before each write. Unlike `signal`, which a timer aborts, it asks
   * the partition's lease at that moment.
   */
  readonly fence?: () => void;
  /** carries the reconcile id, the object's key and the trace */
  readonly log: Log;
  /** one per try: in its logs and in its recorded outcome (`kubebus history`) */
  readonly reconcileId: string;
  /** the W3C traceparent of this reconcile (a span of the change's trace) */
  readonly traceparent: string;
  /** 1 on the first try, then counts retries */
  readonly attempt: number;
}

export interface ListOptions {
  /** default: the primary object's namespace (every namespace when it is cluster-scoped) */
  readonly namespace?: string;
  /** a Kubernetes label selector: `app=web,tier!=db`, `env in (a,b)`, `managed`, `!legacy` */
  readonly labelSelector?: string;
}

/** A Secret's values by key, as text (ctx.readSecret). */
export type SecretValues = Readonly<Record<string, string>>;

/** A declared external call (ctx.once). */
export interface OnceEffect {
  /** makes the call */
  perform(idempotencyKey: string): Promise<void>;
  /** whether the receiver already had the call with this key */
  done?(idempotencyKey: string): Promise<boolean>;
}

/** How an Event is recorded. */
export interface EventOptions {
  /** records it once per object and key (its name derived from the operator, the object's uid and the key): `'credentials-created'` */
  readonly once?: string;
}

export interface ReconcileContext<Deps = undefined> extends RuntimeContext {
  /**
   * Server-side apply of an object this operator owns (declared in `owns`):
   * the namespace defaults to the primary object's, the controller owner
   * reference is set, the field manager is the operator's. The body is typed
   * by the resource (`kinds.Deployment`, your own `defineResource`): a
   * misspelt field does not compile. Answers the object as the apiserver
   * answered the apply, or — when nothing would change and the apply is not
   * sent — as last recorded (Secrets without their data).
   */
  apply<R extends Resource>(resource: R, body: BodyOf<R>): Promise<ObjectOf<R>>;
  /** The untyped form: any object of a declared kind, with its apiVersion and kind. */
  apply(object: DesiredObject): Promise<ResourceObject>;
  /** Creates the object unless it exists (generated credentials, say); never updates it. */
  createOnce<R extends Resource>(resource: R, body: BodyOf<R>): Promise<'created' | 'exists'>;
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
  /**
   * The objects of a resource this operator reconciles, owns or watches, as
   * last recorded on the bus: no apiserver request (past 1024 objects in the
   * range, one pass through the stream instead of a batched read). Namespace
   * omitted: the primary object's (every namespace when it is cluster-scoped).
   */
  list<R extends Resource>(resource: R, options?: ListOptions): Promise<ObjectOf<R>[]>;
  /**
   * The values of a Secret (its `data`, decoded as UTF-8 text), read from the
   * apiserver: the bus records Secrets without them. One GET per call, with
   * the reconciler's own client, under a rule the operator declares:
   * `rbac: { rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] }`,
   * with `resourceNames` where the names are known. undefined when the
   * Secret does not exist. Namespace omitted: the primary object's. Keep
   * the values out of logs, Events and statuses.
   */
  readSecret(name: string, namespace?: string): Promise<SecretValues | undefined>;
  /**
   * Deletes an object of a resource in `owns` (background propagation) with
   * the process' apiserver client. Idempotent: an object already gone is
   * 'absent'; one the apiserver marked and keeps (its finalizers pending, a
   * grace period) is 'terminating', each time it is asked again until it is
   * gone: wait for 'absent' before making one of the same name. Under
   * `kubebus replay` sent as a dry run.
   */
  delete(
    resource: Resource,
    name: string,
    namespace?: string,
  ): Promise<'deleted' | 'terminating' | 'absent'>;
  /**
   * Records a Kubernetes Event about the object being reconciled. With
   * `{ once: key }` the object records it once for that key: a retry, a
   * restart or another replica that records it again finds it there (for as
   * long as the apiserver keeps Events, an hour by default); an empty key
   * throws.
   */
  event(
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    options?: EventOptions,
  ): Promise<void>;
  /**
   * An external call this object owes once (a charge, a webhook, a mail),
   * declared: `kubebus test` counts each one made and fails a schedule that
   * makes it more or fewer times than the unperturbed run
   * (`side-effects-once`), and `kubebus replay` never makes it ('done').
   * `perform` gets an idempotency key, `<operator>/<uid>/<key>`: the same on
   * every retry, restart and replica, for the receiver to know a call again.
   * A call is claimed on the bus before it is made and recorded made after:
   * a later reconcile of the object that reaches the same key (a retry, a
   * change, a restart, another replica) answers 'done' without calling. A
   * reconcile that stops between the call and its record (a crash) leaves a
   * claim: the next calls again. With `done`, the receiver is asked before
   * any call the bus has no record of: the one way that crash does not
   * repeat it.
   */
  once(key: string, effect: OnceEffect): Promise<'performed' | 'done'>;
  /**
   * true under `kubebus replay`: apiserver writes are sent as dry runs and
   * statuses are compared, not written; touch nothing outside Kubernetes
   */
  readonly dryRun: boolean;
  /** what the operator's `setup` returned, made once per process */
  readonly deps: Deps;
}
