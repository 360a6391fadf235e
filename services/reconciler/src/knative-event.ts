// Events as Knative's ApiServerSource sends them, beside kubebus' own. Their
// shape is made in knative.dev/eventing pkg/adapter/apiserver/events/events.go
// (v0.45.0): type dev.knative.apiserver.{resource|ref}.{add|update|delete},
// extensions kind, apiversion, name, namespace, a subject guessed from the
// kind, an id chosen by the CloudEvents client (a UUID), and as data the
// object (Resource mode) or an ObjectReference {apiVersion, kind, name,
// namespace} (Reference mode). No uid or resourceVersion outside the object.
import { KubeObjectSchema, controllerOf, type KubeObject } from '@kubebus/shared/events';
import { nameProblem, namespaceProblem, validateObjectKey } from '@kubebus/shared/kube';
import type { ObjectKey } from '@kubebus/shared/runtime';
import { z } from 'zod';

const KnativeTypes = /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/;

const ReferenceSchema = z.object({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1),
  namespace: z.string().optional(),
});

export interface ApiServerSourceEvent {
  readonly id: string;
  /** the CloudEvent's source (the apiserver's URL); with id, what makes it unique */
  readonly source: string;
  readonly mode: 'resource' | 'ref';
  readonly op: 'add' | 'update' | 'delete';
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  /** Resource mode: the object as the adapter saw it */
  readonly object?: KubeObject;
  readonly traceparent?: string;
}

export type KnativeParse =
  | { readonly ok: true; readonly event: ApiServerSourceEvent }
  | { readonly ok: false; readonly reason: string };

/** An ApiServerSource event, or why it is not one (undefined: another type). */
export function parseApiServerSourceEvent(
  attributes: Record<string, unknown>,
): KnativeParse | undefined {
  const type = typeof attributes['type'] === 'string' ? attributes['type'] : '';
  const matched = KnativeTypes.exec(type);
  if (matched === null) return undefined;
  const mode = matched[1] as 'resource' | 'ref';
  const op = matched[2] as 'add' | 'update' | 'delete';
  const data =
    typeof attributes['data'] === 'string' ? safeJson(attributes['data']) : attributes['data'];
  const traceparent =
    typeof attributes['traceparent'] === 'string' ? attributes['traceparent'] : undefined;
  const common = {
    id: typeof attributes['id'] === 'string' ? attributes['id'] : '',
    source: typeof attributes['source'] === 'string' ? attributes['source'] : '',
    mode,
    op,
    ...(traceparent === undefined ? {} : { traceparent }),
  };
  if (mode === 'ref') {
    const ref = ReferenceSchema.safeParse(data);
    if (!ref.success)
      return { ok: false, reason: `not an ApiServerSource reference: ${issues(ref.error)}` };
    return { ok: true, event: { ...common, ...ref.data, namespace: ref.data.namespace ?? '' } };
  }
  const object = KubeObjectSchema.safeParse(data);
  if (!object.success)
    return { ok: false, reason: `not an ApiServerSource resource event: ${issues(object.error)}` };
  const { apiVersion, kind, metadata } = object.data;
  return {
    ok: true,
    event: {
      ...common,
      apiVersion,
      kind,
      name: metadata.name,
      namespace: metadata.namespace ?? '',
      object: object.data,
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const issues = (error: z.ZodError) =>
  error.issues.map((i) => `${i.path.join('.') || 'data'}: ${i.message}`).join('; ');

/** A resource the reconciler knows: its primary, or what it owns or watches. */
export interface KnownResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/**
 * What an event asks of this controller: reconcile a key, nothing (not one of
 * its objects), or it cannot be right (a name no object can have: refused
 * before it reaches a subject or an apiserver path).
 */
export type EventKey =
  | { readonly kind: 'key'; readonly key: ObjectKey }
  | { readonly kind: 'ignored' }
  | { readonly kind: 'invalid'; readonly reason: string };

/** The key, checked by Kubernetes' naming rules. */
export function checkedKey(key: ObjectKey): EventKey {
  const checked = validateObjectKey(key);
  return checked.ok ? { kind: 'key', key } : { kind: 'invalid', reason: checked.reason };
}

const IGNORED: EventKey = { kind: 'ignored' };

/**
 * The object to reconcile for an ApiServerSource event: the object itself if
 * it is of the primary resource, else its controller owner if that is. A
 * reference to an owned object is read from the apiserver to find its owner
 * (a deleted one cannot be: its owner is reconciled at its next change) —
 * only once its name and namespace are ones an object can have, so that no
 * `..` or over-long name bends the path read.
 */
export async function keyOfApiServerSourceEvent(
  event: ApiServerSourceEvent,
  primary: KnownResource,
  resources: readonly KnownResource[],
  read: (
    resource: KnownResource,
    namespace: string,
    name: string,
  ) => Promise<KubeObject | undefined>,
): Promise<EventKey> {
  const invalid = nameProblem(event.name) ?? namespaceProblem(event.namespace);
  if (invalid !== undefined) return { kind: 'invalid', reason: `invalid key: ${invalid}` };
  const groupOf = (apiVersion: string) =>
    apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
  const namespace = primary.namespaced ? event.namespace : '';
  if (event.kind === primary.kind && groupOf(event.apiVersion) === primary.group)
    return checkedKey({
      group: primary.group,
      resource: primary.resource,
      namespace,
      name: event.name,
    });
  const resource = resources.find(
    (known) => known.kind === event.kind && known.group === groupOf(event.apiVersion),
  );
  if (resource === undefined) return IGNORED;
  const object =
    event.object ??
    (event.op === 'delete' ? undefined : await read(resource, event.namespace, event.name));
  const owner = object === undefined ? undefined : controllerOf(object);
  if (
    owner === undefined ||
    owner.kind !== primary.kind ||
    groupOf(owner.apiVersion) !== primary.group
  )
    return IGNORED;
  return checkedKey({
    group: primary.group,
    resource: primary.resource,
    namespace,
    name: owner.name,
  });
}
