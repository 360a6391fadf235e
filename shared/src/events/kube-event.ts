// A change to a Kubernetes object as a CloudEvent 1.0. Types and attributes
// follow Knative's ApiServerSource (Resource mode) so its consumers understand
// them; kubebus adds lower-case `kb*` extensions.
import { z } from 'zod';
import { apiVersionOf, objectPath, type ObjectKey, type ResourceRef } from '../kube/refs.js';
import { KubeObjectSchema, type KubeObject } from './kube-object.js';

export const ChangeOps = ['add', 'update', 'delete'] as const;
export type ChangeOp = (typeof ChangeOps)[number];

export const EventTypes = {
  add: 'dev.knative.apiserver.resource.add',
  update: 'dev.knative.apiserver.resource.update',
  delete: 'dev.knative.apiserver.resource.delete',
} as const satisfies Record<ChangeOp, string>;

/** Why the watcher sent the event. */
export const SendReasons = ['watch', 'relist', 'resync'] as const;
export type SendReason = (typeof SendReasons)[number];

const typeToOp = new Map<string, ChangeOp>(ChangeOps.map((op) => [EventTypes[op], op]));

export const KubeCloudEventSchema = z.object({
  specversion: z.literal('1.0'),
  id: z.string().min(1),
  source: z.string().min(1),
  type: z.enum([EventTypes.add, EventTypes.update, EventTypes.delete]),
  subject: z.string().min(1),
  time: z.string().optional(),
  datacontenttype: z.string().optional(),
  // Knative ApiServerSource extensions
  kind: z.string().min(1),
  name: z.string().min(1),
  namespace: z.string().optional(),
  apiversion: z.string().min(1),
  // kubebus extensions
  kbgroup: z.string(),
  kbresource: z.string().min(1),
  kbuid: z.string().min(1),
  kbrv: z.string().min(1),
  kbgeneration: z.coerce.number().int().optional(),
  kbreason: z.enum(SendReasons),
  /** 'apiserver' when the object was too large to carry: fetch it by `subject`. */
  kbref: z.literal('apiserver').optional(),
  traceparent: z.string().optional(),
  data: KubeObjectSchema.optional(),
});

export type KubeCloudEvent = z.infer<typeof KubeCloudEventSchema>;

/** Deterministic, so restarts, relists and twin watchers publish the same id. */
export function eventId(uid: string, resourceVersion: string, op: ChangeOp): string {
  return `${uid}/${resourceVersion}/${op}`;
}

export function opOf(event: Pick<KubeCloudEvent, 'type'>): ChangeOp {
  const op = typeToOp.get(event.type);
  if (op === undefined) throw new Error(`not a kube change type: ${event.type}`);
  return op;
}

export function keyOfEvent(event: KubeCloudEvent): ObjectKey {
  return {
    group: event.kbgroup,
    resource: event.kbresource,
    namespace: event.namespace ?? '',
    name: event.name,
  };
}

export interface KubeEventInput {
  readonly resource: ResourceRef;
  readonly object: KubeObject;
  readonly op: ChangeOp;
  readonly reason: SendReason;
  /** the apiserver URL */
  readonly source: string;
  readonly time: Date;
  readonly traceparent?: string;
}

export function kubeEvent(input: KubeEventInput): KubeCloudEvent {
  const { object, resource } = input;
  const { metadata } = object;
  const namespace = metadata.namespace ?? '';
  return {
    specversion: '1.0',
    id: eventId(metadata.uid, metadata.resourceVersion, input.op),
    source: input.source,
    type: EventTypes[input.op],
    subject: objectPath(resource, namespace, metadata.name),
    time: input.time.toISOString(),
    datacontenttype: 'application/json',
    kind: object.kind,
    name: metadata.name,
    ...(namespace === '' ? {} : { namespace }),
    apiversion: apiVersionOf(resource),
    kbgroup: resource.group,
    kbresource: resource.resource,
    kbuid: metadata.uid,
    kbrv: metadata.resourceVersion,
    ...(metadata.generation === undefined ? {} : { kbgeneration: metadata.generation }),
    kbreason: input.reason,
    ...(input.traceparent === undefined ? {} : { traceparent: input.traceparent }),
    data: object,
  };
}

/** The same event without its data: consumers fetch the object from the apiserver. */
export function byReference(event: KubeCloudEvent): KubeCloudEvent {
  const attributes = { ...event, kbref: 'apiserver' as const };
  delete attributes.data;
  return attributes;
}
