// The identity of the object a reconcile is about: stable across API versions.
export interface ObjectKey {
  /** '' for the core group */
  readonly group: string;
  /** the plural resource name */
  readonly resource: string;
  /** '' for cluster-scoped objects */
  readonly namespace: string;
  readonly name: string;
}

export function keyString(key: ObjectKey): string {
  return `${key.group}/${key.resource}/${key.namespace}/${key.name}`;
}
