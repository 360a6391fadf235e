// Server-side apply, owner references, finalizers and Events: the writes a
// reconciler makes, each idempotent.
import { createHash, randomBytes } from 'node:crypto';
import { publicText } from '../errors/public-text.js';
import type { KubeObject } from '../events/kube-object.js';
import { isConflict, isKubeApiError } from './api-error.js';
import { ContentTypes, type KubeClient } from './client.js';
import { collectionPath, objectPath, type ResourceRef } from './refs.js';

export interface ApplyOptions {
  /** one field manager per controller */
  readonly fieldManager: string;
  readonly subresource?: 'status';
  readonly signal?: AbortSignal;
}

/** Applies `object` (server-side apply, forced: the controller owns what it sets). */
export type ApplyBody = {
  metadata: { name: string; namespace?: string } & Record<string, unknown>;
} & Record<string, unknown>;

export async function apply<T = KubeObject>(
  client: KubeClient,
  resource: ResourceRef,
  object: ApplyBody,
  options: ApplyOptions,
): Promise<T> {
  const path = objectPath(resource, object.metadata.namespace ?? '', object.metadata.name);
  return client.request<T>(options.subresource ? `${path}/${options.subresource}` : path, {
    method: 'PATCH',
    contentType: ContentTypes.apply,
    query: { fieldManager: options.fieldManager, force: true },
    body: object,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** Creates `object` unless it exists (create-once objects such as generated credentials). */
export async function createIfAbsent(
  client: KubeClient,
  resource: ResourceRef,
  object: ApplyBody,
  fieldManager: string,
  signal?: AbortSignal,
): Promise<'created' | 'exists'> {
  try {
    await client.request(collectionPath(resource, object.metadata.namespace), {
      method: 'POST',
      query: { fieldManager },
      body: object,
      ...(signal === undefined ? {} : { signal }),
    });
    return 'created';
  } catch (error) {
    if (isConflict(error)) return 'exists';
    throw error;
  }
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: true;
  readonly blockOwnerDeletion: true;
}

/** The controller owner reference that ties an owned object to `owner`. */
export function controllerReference(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return ((object.metadata['finalizers'] as string[] | undefined) ?? []).includes(finalizer);
}

/**
 * Adds or removes the controller's finalizer with server-side apply under a
 * manager of its own: finalizers is a set, so other owners' entries stay.
 */
export async function setFinalizer(
  client: KubeClient,
  resource: ResourceRef,
  object: KubeObject,
  finalizer: string,
  present: boolean,
  fieldManager: string,
): Promise<KubeObject> {
  // the answer: the revision this write made (read-your-own-writes)
  return apply(
    client,
    resource,
    {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: {
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
        // Guards against acting on an object that was replaced meanwhile.
        uid: object.metadata.uid,
        finalizers: present ? [finalizer] : [],
      },
    },
    { fieldManager: `${fieldManager}-finalizer` },
  );
}

/**
 * Removes `finalizer` from the object the apply of setFinalizer answered,
 * when that apply left it there: an entry server-side apply does not take
 * away is another manager's — the same operator's under an earlier name or
 * field manager. A JSON patch that first tests the uid and the entry, so a
 * replaced object or a list changed meanwhile is refused (and retried), never
 * the wrong entry removed. Answers the object as written.
 */
export async function releaseFinalizer(
  client: KubeClient,
  resource: ResourceRef,
  written: KubeObject,
  finalizer: string,
): Promise<KubeObject> {
  const { namespace = '', name, uid } = written.metadata;
  const path = objectPath(resource, namespace, name);
  let current: KubeObject | undefined = written;
  // a test that fails (422: another controller's finalizer went first) reads
  // again, a few times: finalizers come off together when a namespace goes
  for (let attempt = 1; ; attempt++) {
    if (current === undefined || current.metadata.uid !== uid) return written;
    const index = ((current.metadata['finalizers'] as string[] | undefined) ?? []).indexOf(
      finalizer,
    );
    if (index < 0) return current;
    try {
      return await client.request<KubeObject>(path, {
        method: 'PATCH',
        contentType: ContentTypes.jsonPatch,
        body: [
          { op: 'test', path: '/metadata/uid', value: uid },
          { op: 'test', path: `/metadata/finalizers/${String(index)}`, value: finalizer },
          { op: 'remove', path: `/metadata/finalizers/${String(index)}` },
        ],
      });
    } catch (error) {
      if (!isKubeApiError(error, 422) || attempt >= 5) throw error;
      current = await client.getIfExists<KubeObject>(path);
    }
  }
}

export interface EventInput {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
  readonly action: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
}

const EVENTS: ResourceRef = {
  group: 'events.k8s.io',
  version: 'v1',
  resource: 'events',
  namespaced: true,
};

/** How an Event is sent: a retry sends the same name and time again. */
export interface EventSend {
  readonly signal?: AbortSignal;
  /** when it happened: an Event sent in the background keeps the time it was recorded */
  readonly time?: Date;
  /** drawn once per Event: a retry of a POST that did land answers AlreadyExists, not a twin */
  readonly name?: string;
}

/** events.k8s.io/v1's limit on an Event's note, in bytes */
export const MAX_NOTE_BYTES = 1024;

/** A new Event's name, as client-go's recorder makes it: the object's name and a unique part. */
export function newEventName(object: KubeObject): string {
  return `${object.metadata.name}.${randomBytes(8).toString('hex')}`;
}

/**
 * The name of the Event an operator records once about `object` for `key`:
 * the same from every retry, restart and replica, so a second POST finds the
 * first (409). Another operator's key of the same name is another Event.
 */
export function onceEventName(object: KubeObject, operator: string, key: string): string {
  const digest = createHash('sha256')
    .update(`${operator}/${object.metadata.uid}/${key}`)
    .digest('hex');
  return `${object.metadata.name}.${digest.slice(0, 16)}`;
}

/** The apiserver's answer to a POST of an Event already there under its name. */
export function isAlreadyRecorded(error: unknown): boolean {
  return isKubeApiError(error, 409) && error.reason === 'AlreadyExists';
}

/** Records a Kubernetes Event (events.k8s.io/v1) about `object`. */
export async function recordEvent(
  client: KubeClient,
  object: KubeObject,
  input: EventInput,
  send: EventSend = {},
): Promise<void> {
  const namespace = object.metadata.namespace ?? 'default';
  const now = (send.time ?? new Date()).toISOString().replace('Z', '000Z'); // MicroTime
  await client.request(collectionPath(EVENTS, namespace), {
    ...(send.signal === undefined ? {} : { signal: send.signal }),
    method: 'POST',
    body: {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: send.name ?? newEventName(object), namespace },
      eventTime: now,
      type: input.type,
      reason: input.reason,
      // `view` reads Events, not Secrets: no credentials, no control characters (public-text.ts)
      note: truncateUtf8(publicText(input.note), MAX_NOTE_BYTES),
      action: input.action,
      reportingController: input.reportingController,
      reportingInstance: input.reportingInstance,
      regarding: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name,
        namespace: object.metadata.namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
      },
    },
  });
}

/** At most `maxBytes` of UTF-8, never half a character (the apiserver counts bytes). */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const bytes = Buffer.from(text).subarray(0, maxBytes);
  // a cut inside a multi-byte character leaves a partial sequence: drop it
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/\uFFFD$/, '');
}
