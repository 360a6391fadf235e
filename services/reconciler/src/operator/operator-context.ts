// The `ctx` a reconcile gets: applies with the owner reference and field
// manager set, create-once, reads from the bus, Events about the object.
import type { ObjectReader } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import {
  controllerReference,
  createIfAbsent,
  recordEvent,
  type AppliedObjects,
  type ApplyBody,
  type KubeClient,
} from '@kubebus/shared/kube';
import type { ReconcileContext as RuntimeContext } from '@kubebus/shared/runtime';
import type { DesiredObject, Operator, ReconcileContext, Resource } from 'kubebus';
import { refOf, type KnownResources } from './known-resources.js';

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
}

export function operatorContext(
  deps: ContextDeps,
  owner: KubeObject,
  runtime: RuntimeContext,
): ReconcileContext<unknown> {
  const ownerNamespace = owner.metadata.namespace ?? '';

  /** The body to send: namespace defaulted, the controller owner reference added. */
  const owned = (
    object: DesiredObject,
    purpose: string,
  ): { body: ApplyBody; resource: Resource } => {
    const resource = deps.known.of(object.apiVersion, object.kind, purpose);
    const namespaced = resource.scope === 'Namespaced';
    const namespace = namespaced ? (object.metadata.namespace ?? ownerNamespace) : undefined;
    if (namespaced && namespace === '')
      throw new TypeError(`${purpose}: ${object.kind} ${object.metadata.name} needs a namespace`);
    const references = (object.metadata as { ownerReferences?: unknown[] }).ownerReferences ?? [];
    // An owner reference may only point to an owner in the same namespace (or a cluster-scoped one).
    const ownable = ownerNamespace === '' || namespace === ownerNamespace;
    return {
      resource,
      body: {
        ...object,
        metadata: {
          ...object.metadata,
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

  return {
    async apply(object) {
      const { body, resource } = owned(object, 'ctx.apply');
      const recorded = await recordedOf(body, resource);
      await deps.applied.apply(
        deps.client,
        refOf(resource),
        body,
        { fieldManager: deps.fieldManager, signal: runtime.signal },
        recorded,
      );
    },
    async createOnce(object) {
      const { body, resource } = owned(object, 'ctx.createOnce');
      const recorded = await recordedOf(body, resource);
      if (recorded !== undefined) return 'exists';
      return createIfAbsent(deps.client, refOf(resource), body, deps.fieldManager);
    },
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
      // the recorded object is one of the resource's objects: its type is what the handle says
      return found as never;
    },
    async event(type, reason, message) {
      await recordEvent(deps.client, owner, {
        type,
        reason,
        note: message,
        action: 'Reconcile',
        reportingController: `kubebus.dev/${deps.operator.name}`,
        reportingInstance: deps.instance.slice(0, 128),
      });
    },
    log: runtime.log,
    signal: runtime.signal,
    attempt: runtime.attempt,
    traceparent: runtime.traceparent,
    dryRun: deps.dryRun,
    deps: deps.deps,
  };
}
