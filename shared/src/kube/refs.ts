// How kubebus names resources and objects: a group/version/resource, and an
// object key that is stable across API versions (its identity in every subject).

export interface ResourceRef {
  /** '' for the core group */
  readonly group: string;
  readonly version: string;
  /** the plural resource name, e.g. 'statefulsets' */
  readonly resource: string;
  readonly namespaced: boolean;
}

import type { ObjectKey } from '../runtime/object-key.js';

export type { ObjectKey };

export function apiVersionOf(resource: Pick<ResourceRef, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** The URL path of a resource collection, optionally inside one namespace. */
export function collectionPath(resource: ResourceRef, namespace?: string): string {
  const base =
    resource.group === ''
      ? `/api/${resource.version}`
      : `/apis/${resource.group}/${resource.version}`;
  const scope =
    resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${scope}/${resource.resource}`;
}

/** The URL path of one object: also its CloudEvent `subject`, as Knative's ApiServerSource. */
export function objectPath(resource: ResourceRef, namespace: string, name: string): string {
  return `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`;
}

export function objectKey(
  resource: Pick<ResourceRef, 'group' | 'resource'>,
  namespace: string,
  name: string,
): ObjectKey {
  return { group: resource.group, resource: resource.resource, namespace, name };
}

export function formatKey(key: ObjectKey): string {
  const where = key.namespace === '' ? key.name : `${key.namespace}/${key.name}`;
  return `${key.resource}${key.group === '' ? '' : `.${key.group}`}/${where}`;
}

export function resourceId(resource: Pick<ResourceRef, 'group' | 'resource'>): string {
  return resource.group === '' ? resource.resource : `${resource.resource}.${resource.group}`;
}
