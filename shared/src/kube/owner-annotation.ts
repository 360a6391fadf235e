// Who applied an object that cannot carry its owner's reference: a namespaced
// owner's child in another namespace (an owner reference names no namespace).
// The reconciler writes it and refuses another owner's apply by it; the watcher
// maps the child's changes back to the owner by it, as it does by an owner
// reference (operator-sdk's EnqueueRequestForAnnotation does the same).
import { isDns1123Label, isDns1123Subdomain } from './names.js';

export const OWNER_ANNOTATION = 'kubebus.dev/owner';

/** The owner an annotation names. */
export interface AnnotatedOwner {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

interface OwnerLike {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string | undefined };
}

/** `Kind.group namespace/name`: the annotation's value for `owner`. */
export function ownerAnnotationOf(owner: OwnerLike): string {
  const group = owner.apiVersion.includes('/') ? (owner.apiVersion.split('/')[0] ?? '') : '';
  const { namespace, name } = owner.metadata;
  return `${owner.kind}${group === '' ? '' : `.${group}`} ${namespace ?? ''}/${name}`;
}

/** The owner the annotation's value names; undefined when it names none a namespace holds. */
export function parseOwnerAnnotation(value: string | undefined): AnnotatedOwner | undefined {
  if (value === undefined || value.length > 512) return undefined;
  const match = /^([A-Za-z0-9]+)(?:\.([^ ]+))? ([^/ ]+)\/([^/ ]+)$/.exec(value);
  if (match === null) return undefined;
  const [, kind = '', group = '', namespace = '', name = ''] = match;
  if (group !== '' && !isDns1123Subdomain(group)) return undefined;
  if (!isDns1123Label(namespace) || !isDns1123Subdomain(name)) return undefined;
  return { group, kind, namespace, name };
}
