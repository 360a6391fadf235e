// The `ctx` a reconcile gets: applies with the owner reference and field
// manager set, create-once, reads and lists from the bus, deletes, Events
// about the object, declared external calls. What it applies is remembered
// for pruning. Every write carries the reconcile's signal, and asks right
// before it is sent whether the reconcile may still act: once the runtime
// revokes the reconcile (its partition's lease lost or no longer trusted,
// the process stopping) the write is refused — a zombie reconcile writes
// nothing more (ADR 0005).
import {
  TooManyCalls,
  type ObjectReader,
  type OwnWrites,
  type PerformedCalls,
} from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import {
  controllerReference,
  createIfAbsent,
  isNotFound,
  withoutSecretValues,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OWNER_ANNOTATION,
  isAlreadyRecorded,
  ownerAnnotationOf,
  objectPath,
  onceEventName,
  recordEvent,
  type AppliedObjects,
  type ApplyBody,
  type EventInput,
  type EventRecorder,
  type KubeClient,
} from '@kubebus/shared/kube';
import {
  apiVersionOf,
  TerminalError,
  type DesiredBody,
  type DesiredObject,
  type OnceEffect,
  type Operator,
  type ReconcileContext,
  type Resource,
  type RuntimeContext,
} from '@kubebus/shared/definition';
import { markKubebusError, markOperatorError } from '@kubebus/shared/errors';
import { isAbandonedReconcile } from '@kubebus/shared/runtime';
import { refOf, type KnownResources } from './known-resources.js';
import { labelSelector } from './label-selector.js';
import type { ObjectLister } from './object-lister.js';
import type { StorageVersionReader } from './storage-version.js';
import { fenced } from './fenced.js';
import { CONTROLLER_LABEL, deleteAnswering, ownedKey } from './owned-objects.js';
import { secretPlaceRefusal, secretReadRefusal, secretValuesOf } from './secret-values.js';
import type { InFlightCalls } from './in-flight-calls.js';
import { explainedRefusal } from './refused-write.js';
import { AlreadyOwnedError, isSecondController, ownershipRefusal } from './ownership.js';

const SECRETS = { group: '', version: 'v1', resource: 'secrets', namespaced: true } as const;

/** events.k8s.io/v1's limit on an Event's reason, in bytes */
const MAX_EVENT_REASON = 128;
/** The Warning Event of a ctx.delete refused (not this owner's child), once per object and name. */
const NOT_DELETED = 'NotDeleted';

export interface ContextDeps {
  readonly operator: Operator;
  readonly known: KnownResources;
  readonly reader: Pick<ObjectReader, 'read'>;
  readonly client: KubeClient;
  readonly applied: AppliedObjects;
  readonly fieldManager: string;
  readonly instance: string;
  readonly dryRun: boolean;
  /** what the operator's setup made */
  readonly deps: unknown;
  readonly lister: ObjectLister;
  /** the operator's own resource's objects in its storage version, as the reconcile gets them */
  readonly storage: Pick<StorageVersionReader, 'needed' | 'convert' | 'all'>;
  /** the owned objects this reconcile applied or created (ownedKey): what pruning keeps */
  readonly touched: Set<string>;
  /** what this process wrote: later reads answer nothing older (read-your-own-writes) */
  readonly ownWrites?: OwnWrites;
  /** Events sent in the background; without it (replay) each is sent before ctx.event returns */
  readonly events?: EventRecorder;
  /** the calls started and not yet settled: the reconcile ends with them (in-flight-calls.ts) */
  readonly calls?: InFlightCalls;
  /**
   * ctx.once's record of the calls made (performed-calls.ts); without it
   * nothing is remembered, and replay answers 'done'. Replay's answers as of
   * the replayed revision.
   */
  readonly performed?: Pick<PerformedCalls, 'find' | 'claim' | 'made' | 'release'>;
  /** each object ctx.get and ctx.list hand the operator (what its round read) */
  readonly seen?: (object: KubeObject) => void;
  /** how often an apply refused another owner's name is looked at again (KUBEBUS_CLAIM_RETRY) */
  readonly claimRetryMs?: number;
}

export function operatorContext(
  deps: ContextDeps,
  owner: KubeObject,
  runtime: RuntimeContext,
): ReconcileContext<unknown> {
  const ownerNamespace = owner.metadata.namespace ?? '';
  /** whose outcome record hands this reconcile's own writes down */
  const primary = {
    group: deps.operator.for.group,
    resource: deps.operator.for.plural,
    namespace: ownerNamespace,
    name: owner.metadata.name,
  };

  /** The body to send: namespace defaulted, the controller owner reference added. */
  const owned = (
    object: DesiredObject,
    purpose: string,
  ): { body: ApplyBody; resource: Resource; ownable: boolean } => {
    const resource = deps.known.of(object.apiVersion, object.kind, purpose);
    const namespaced = resource.scope === 'Namespaced';
    const namespace = namespaced ? (object.metadata.namespace ?? ownerNamespace) : undefined;
    if (namespaced && namespace === '')
      throw new TypeError(`${purpose}: ${object.kind} ${object.metadata.name} needs a namespace`);
    const references = (object.metadata as { ownerReferences?: unknown[] }).ownerReferences ?? [];
    // An owner reference may only point to an owner in the same namespace (or a
    // cluster-scoped one): written elsewhere, an object has none — nothing
    // prunes or collects it, `finalize` deletes it (docs/operators.md)
    const ownable = ownerNamespace === '' || namespace === ownerNamespace;
    return {
      resource,
      ownable,
      body: {
        ...object,
        metadata: {
          ...object.metadata,
          // what the watcher selects owned kinds by (it publishes nothing else of them)
          // and the operator's name: what pruning requires besides the owner reference
          labels: {
            ...object.metadata.labels,
            [MANAGED_BY_LABEL]: MANAGED_BY,
            [CONTROLLER_LABEL]: deps.operator.name,
          },
          // beyond an owner reference's reach, who applied it is said here (ownership.ts)
          ...(ownable
            ? {}
            : {
                annotations: {
                  ...object.metadata.annotations,
                  [OWNER_ANNOTATION]: ownerAnnotationOf(owner),
                },
              }),
          ...(namespace === undefined ? {} : { namespace }),
          ownerReferences:
            ownable &&
            !references.some((ref) => (ref as { uid?: unknown }).uid === owner.metadata.uid)
              ? [...references, controllerReference(owner)]
              : references,
        },
      },
    };
  };

  /** The object as last recorded on the bus (what the apply would change). */
  const recordedOf = (body: ApplyBody, resource: Resource) =>
    deps.reader.read({
      group: resource.group,
      resource: resource.plural,
      namespace: body.metadata.namespace ?? '',
      name: body.metadata.name,
    });

  /**
   * Why an object may not be applied or deleted as this owner's child, if it may
   * not (ownership.ts): another owner's child, or one that only this operator's
   * label could say is its own (cluster-scoped, beyond an owner reference's
   * reach, or to be deleted) and another made. The bus records only this
   * operator's children: to apply, what it has no record of is read from the
   * apiserver — but a namespaced one, adopted as controller-runtime does — and a
   * refusal the record suggests is confirmed there (the record may be behind
   * the other owner letting go). To delete, the apiserver is always asked: a
   * record behind a change of hands would delete another's. `current` is the
   * object as last known.
   */
  const claimOf = async (
    target: { resource: Resource; kind: string; namespace: string; name: string },
    labelOnly: boolean,
    action: 'apply' | 'delete',
    /** 'unknown': read it from the apiserver whatever the bus says */
    recorded: KubeObject | undefined | 'unknown',
  ): Promise<{ refusal?: string; current: KubeObject | undefined }> => {
    const { resource, namespace, name } = target;
    const describe = `${target.kind} ${namespace === '' ? '' : `${namespace}/`}${name}`;
    const refusalOf = (current: KubeObject | undefined) =>
      ownershipRefusal(current, owner, {
        operator: deps.operator.name,
        describe,
        labelOnly,
        action,
        ...(deps.claimRetryMs === undefined ? {} : { retryMs: deps.claimRetryMs }),
      });
    if (recorded !== 'unknown') {
      const ask =
        action === 'delete' ||
        (recorded === undefined ? labelOnly : refusalOf(recorded) !== undefined);
      if (!ask) return { current: recorded };
    }
    const current = await deps.client.getIfExists<KubeObject>(
      objectPath(refOf(resource), namespace, name),
    );
    const refusal = refusalOf(current);
    return { current, ...(refusal === undefined ? {} : { refusal }) };
  };

  const targetOf = (body: ApplyBody, resource: Resource) => ({
    resource,
    kind: String(body.kind),
    namespace: body.metadata.namespace ?? '',
    name: body.metadata.name,
  });

  const apply = async (first: Resource | DesiredObject, rest?: DesiredBody) => {
    const { body, resource, ownable } = owned(desiredOf(first, rest), 'ctx.apply');
    // only what carries this object's controller reference is ever pruned
    if (ownable)
      deps.touched.add(ownedKey(resource, body.metadata.namespace ?? '', body.metadata.name));
    const recorded = await recordedOf(body, resource);
    const ref = refOf(resource);
    const labelOnly = resource.scope === 'Cluster' || !ownable;
    const { refusal } = await claimOf(targetOf(body, resource), labelOnly, 'apply', recorded);
    if (refusal !== undefined) throw new AlreadyOwnedError(refusal, deps.claimRetryMs);
    fenced(runtime);
    const { outcome, object } = await deps.applied
      .apply(
        deps.client,
        ref,
        body,
        { fieldManager: deps.fieldManager, signal: runtime.signal },
        recorded,
      )
      .catch(async (error: unknown) => {
        // another's child the bus does not record (not labelled as this operator's): the
        // apiserver refuses a second controller reference; the refusal says whose it is
        if (isSecondController(error)) {
          const again = await claimOf(
            targetOf(body, resource),
            labelOnly,
            'apply',
            'unknown',
          ).catch(
            // the read failing: the apiserver's own refusal is what is said
            () => undefined,
          );
          if (again?.refusal !== undefined)
            throw new AlreadyOwnedError(again.refusal, deps.claimRetryMs);
        }
        throw explainedRefusal(error, body, deps.operator.rbac);
      });
    if (outcome === 'applied' && !deps.dryRun) {
      const namespace = body.metadata.namespace ?? '';
      deps.ownWrites?.wrote(
        { group: resource.group, resource: resource.plural, namespace, name: body.metadata.name },
        object,
        objectPath(ref, namespace, body.metadata.name),
        primary,
      );
    }
    // as the bus records it, whether the apply was sent or not
    return withoutSecretValues(object);
  };
  const createOnce = async (first: Resource | DesiredObject, rest?: DesiredBody) => {
    const { body, resource, ownable } = owned(desiredOf(first, rest), 'ctx.createOnce');
    // only what carries this object's controller reference is ever pruned
    if (ownable)
      deps.touched.add(ownedKey(resource, body.metadata.namespace ?? '', body.metadata.name));
    const recorded = await recordedOf(body, resource);
    // another's (a name in a spec) is not this owner's to answer 'exists' for: its
    // generated credentials would be read as this owner's
    const labelOnly = resource.scope === 'Cluster' || !ownable;
    const { refusal, current } = await claimOf(
      targetOf(body, resource),
      labelOnly,
      'apply',
      recorded,
    );
    if (refusal !== undefined) throw new AlreadyOwnedError(refusal, deps.claimRetryMs);
    if (current !== undefined) return 'exists';
    fenced(runtime);
    const answer = await createIfAbsent(
      deps.client,
      refOf(resource),
      body,
      deps.fieldManager,
      runtime.signal,
    ).catch((error: unknown) => {
      throw explainedRefusal(error, body, deps.operator.rbac);
    });
    // replayed: as of the revision the bus had no such object, so that reconcile made it;
    // today's apiserver has it (made since), and its reads stay the revision's
    if (deps.dryRun && answer === 'exists') return 'created';
    // there after all (`current` was undefined to get here), with no record of it on the
    // bus: another's child (unlabelled) is not this owner's to answer 'exists' for either
    if (answer === 'exists') {
      const again = await claimOf(targetOf(body, resource), labelOnly, 'apply', 'unknown');
      if (again.refusal !== undefined)
        throw new AlreadyOwnedError(again.refusal, deps.claimRetryMs);
    }
    return answer;
  };

  const isPrimary = (resource: Resource) => sameResource(resource, deps.operator.for);

  /** the ctx.once calls of this reconcile by idempotency key */
  const onceRunning = new Map<string, Promise<'performed' | 'done'>>();
  const performOnce = async (
    key: string,
    idempotencyKey: string,
    effect: OnceEffect,
  ): Promise<'performed' | 'done'> => {
    const { performed } = deps;
    const call = { object: primary, uid: owner.metadata.uid, idempotencyKey };
    // made before, by any reconcile of this object (a retry, a restart, another replica)
    const found = await performed?.find(call);
    if (found?.state === 'made') return 'done';
    // replay touches nothing outside Kubernetes: it answers what the reconcile would have
    if (deps.dryRun) return performed === undefined ? 'done' : 'performed';
    fenced(runtime);
    // claimed first, one claimant wins: a claim the bus refuses makes no call (retried)
    const claim = await performed?.claim(call).catch((error: unknown) => {
      // the object's own keys filled its share of the bucket: not fixed by waiting
      throw error instanceof TooManyCalls
        ? new TerminalError(error.message, { cause: error })
        : error;
    });
    if (claim?.state === 'made') return 'done';
    if (claim?.tookOver === true)
      runtime.log.warn(
        { effect: key },
        effect.done === undefined
          ? 'an external call may have been made already (a reconcile stopped between the call and its record): calling again; declare `done` to ask the receiver first'
          : 'an external call may have been made already (a reconcile stopped between the call and its record): asking the receiver',
      );
    try {
      if (effect.done !== undefined && (await effect.done(idempotencyKey))) {
        await performed?.made(call, 'done', claim);
        return 'done';
      }
      fenced(runtime);
      await effect.perform(idempotencyKey);
    } catch (error) {
      // not made (the receiver said no, or the call failed): the retry is a first try. A
      // reconcile revoked meanwhile may have had its call made: its claim stays, to age
      if (claim !== undefined && !runtime.signal.aborted && !isAbandonedReconcile(error))
        await performed?.release(call, claim);
      // the operator's own call: its outage is counted, not waited out (error-origin.ts)
      throw isAbandonedReconcile(error) ? error : markOperatorError(error);
    }
    await performed?.made(call, 'perform', claim);
    runtime.log.info({ effect: key }, 'external side effect performed');
    return 'performed';
  };
  const context: ReconcileContext<unknown> = {
    // one implementation for both forms (kind + body, or a whole object)
    apply,
    createOnce,
    async get(resource, name, namespace) {
      if (!deps.known.has(resource))
        throw new TypeError(
          `ctx.get: ${resource.kind} is not declared by operator "${deps.operator.name}": add it to \`owns\` or \`watches\` so it is recorded`,
        );
      const found = await deps.reader.read({
        group: resource.group,
        resource: resource.plural,
        namespace: resource.scope === 'Namespaced' ? (namespace ?? ownerNamespace) : '',
        name,
      });
      // the operator's own resource may be recorded in another version: read in the storage one, as typed
      const typed =
        found === undefined || !isPrimary(resource) || !deps.storage.needed(found)
          ? found
          : await deps.storage.convert(found);
      if (typed !== undefined) deps.seen?.(typed);
      // the recorded object is one of the resource's objects: its type is what the handle says
      return typed as never;
    },
    async list(resource, options = {}) {
      if (!deps.known.has(resource))
        throw new TypeError(
          `ctx.list: ${resource.kind} is not declared by operator "${deps.operator.name}": add it to \`owns\` or \`watches\` so it is recorded`,
        );
      const matches = labelSelector(options.labelSelector);
      const namespace =
        resource.scope === 'Namespaced'
          ? (options.namespace ?? (ownerNamespace === '' ? undefined : ownerNamespace))
          : undefined;
      const listed = await deps.lister.list(resource, namespace);
      const objects = isPrimary(resource) ? await deps.storage.all(listed) : listed;
      const chosen = objects.filter((object) => matches(object.metadata.labels ?? {}));
      if (deps.seen !== undefined) for (const object of chosen) deps.seen(object);
      // recorded objects of the resource: their type is what the handle says
      return chosen as never;
    },
    async readSecret(name, namespace) {
      // what only a new definition fixes: not retried until then (an upgrade reconciles every object)
      const refused =
        secretPlaceRefusal(name, namespace, ownerNamespace) ??
        secretReadRefusal(deps.operator, name);
      if (refused !== undefined) throw new TerminalError(refused);
      const where = namespace ?? ownerNamespace;
      try {
        const secret = await deps.client.request<{ data?: Record<string, string> }>(
          objectPath(SECRETS, where, name),
          { signal: runtime.signal },
        );
        return secretValuesOf(secret.data, name);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async delete(resource, name, namespace) {
      if (!(deps.operator.owns ?? []).some((kind) => sameResource(kind, resource)))
        throw new TypeError(
          `ctx.delete: ${resource.kind} is not in \`owns\` of operator "${deps.operator.name}": only owned kinds may be deleted`,
        );
      const where = resource.scope === 'Namespaced' ? (namespace ?? ownerNamespace) : '';
      if (resource.scope === 'Namespaced' && where === '')
        throw new TypeError(`ctx.delete: ${resource.kind} ${name} needs a namespace`);
      // another's is not this owner's to delete (a name taken from a spec), nor is
      // what someone else made beyond the owner's namespace (cluster-scoped, another
      // namespace): as far as this owner goes, its child of that name is absent (a
      // finalize that deletes what it made ends; nothing of the other's goes). In its
      // own namespace, one nobody controls may go, as ctx.apply would adopt it
      const beyondOwnNamespace =
        resource.scope === 'Cluster' || (ownerNamespace !== '' && where !== ownerNamespace);
      const claim = await claimOf(
        { resource, kind: resource.kind, namespace: where, name },
        beyondOwnNamespace,
        'delete',
        undefined,
      );
      if (claim.refusal !== undefined) {
        const message = `ctx.delete answered 'absent': ${claim.refusal}`;
        runtime.log.warn({ refused: claim.refusal }, message);
        if (!deps.dryRun)
          await context.event('Warning', NOT_DELETED, message, {
            once: `not-deleted/${resource.group}/${resource.plural}/${where}/${name}`,
          });
        return 'absent';
      }
      if (claim.current === undefined) return 'absent';
      fenced(runtime);
      const answer = await deleteAnswering(deps.client, resource, where, name, runtime.signal);
      if (answer === 'absent') return 'absent';
      const result = answer.terminating ? 'terminating' : 'deleted';
      if (deps.dryRun) return result;
      // read-your-own-writes: a record of it alive, from before the deletion, is not answered
      const ref = refOf(resource);
      deps.ownWrites?.deleted(
        { group: resource.group, resource: resource.plural, namespace: where, name },
        answer.uid,
        objectPath(ref, where, name),
        primary,
      );
      return result;
    },
    async once(key, effect) {
      const idempotencyKey = `${deps.operator.name}/${owner.metadata.uid}/${key}`;
      // the same key twice in one reconcile (Promise.all): the second waits for the first
      const running = onceRunning.get(idempotencyKey);
      if (running !== undefined) return running.then(() => 'done' as const);
      const call = performOnce(key, idempotencyKey, effect);
      onceRunning.set(idempotencyKey, call);
      return call;
    },
    async event(type, reason, message, options) {
      // sent in the background, where a refusal is only logged: what the apiserver
      // would refuse for certain is the reconcile's error, here
      const bytes = Buffer.byteLength(reason);
      if (bytes === 0 || bytes > MAX_EVENT_REASON)
        throw new TerminalError(
          `ctx.event: the reason must be 1-${MAX_EVENT_REASON} bytes, not ${bytes}: the apiserver refuses any other`,
        );
      if (options?.once === '')
        throw new TypeError('ctx.event: `once` needs a key (what the Event announces)');
      fenced(runtime);
      const name =
        options?.once === undefined
          ? undefined
          : onceEventName(owner, deps.operator.name, options.once);
      const input: EventInput = {
        type,
        reason,
        note: message,
        action: 'Reconcile',
        reportingController: `kubebus.dev/${deps.operator.name}`,
        reportingInstance: deps.instance.slice(0, 128),
      };
      if (deps.events === undefined)
        await recordEvent(deps.client, owner, input, {
          signal: runtime.signal,
          ...(name === undefined ? {} : { name }),
        }).catch((error: unknown) => {
          // recorded once already, under its name
          if (name === undefined || !isAlreadyRecorded(error)) throw error;
        });
      // asked again before each try: a reconcile whose partition moved sends no more
      else
        deps.events.record(
          owner,
          input,
          () => {
            fenced(runtime);
          },
          name,
        );
    },
    log: runtime.log,
    signal: runtime.signal,
    reconcileId: runtime.reconcileId,
    attempt: runtime.attempt,
    traceparent: runtime.traceparent,
    dryRun: deps.dryRun,
    deps: deps.deps,
  };
  return withCallsSettled(context, deps.calls);
}

/**
 * The same context, each call it starts (writes, and the reads between them)
 * tracked until it settles (when `calls` is given), and its failure marked
 * kubebus' own (error-origin.ts): a socket error or timeout of the apiserver
 * or NATS is waited out even when it escapes the operator's code, where one of
 * the operator's own calls is not.
 */
function withCallsSettled(
  context: ReconcileContext<unknown>,
  calls: InFlightCalls | undefined,
): ReconcileContext<unknown> {
  type Context = ReconcileContext<unknown>;
  const settled = <T>(call: () => Promise<T>): Promise<T> => {
    const marked = call().catch((error: unknown) => {
      throw markKubebusError(error);
    });
    return calls === undefined ? marked : calls.track(marked);
  };
  return {
    ...context,
    apply: (...args: Parameters<Context['apply']>) => settled(() => context.apply(...args)),
    createOnce: (...args: Parameters<Context['createOnce']>) =>
      settled(() => context.createOnce(...args)),
    get: <R extends Resource>(resource: R, name: string, namespace?: string) =>
      settled(() => context.get(resource, name, namespace)),
    list: <R extends Resource>(resource: R, options?: Parameters<Context['list']>[1]) =>
      settled(() => context.list(resource, options)),
    readSecret: (...args) => settled(() => context.readSecret(...args)),
    delete: (...args) => settled(() => context.delete(...args)),
    once: (...args) => settled(() => context.once(...args)),
    event: (...args) => settled(() => context.event(...args)),
  };
}

/** The object to send: the untyped form as it is, the typed one with its resource's apiVersion and kind. */
function desiredOf(first: Resource | DesiredObject, body: DesiredBody | undefined): DesiredObject {
  if (body === undefined) return first as DesiredObject;
  const resource = first as Resource;
  return { ...body, apiVersion: apiVersionOf(resource), kind: resource.kind };
}

function sameResource(a: Resource, b: Resource): boolean {
  return a.group === b.group && a.plural === b.plural;
}
