// What never leaves the watcher: Secret contents (data, stringData, and the
// last-applied annotation that repeats them) and managedFields, which only
// bloat every event.
import type { KubeObject } from '@kubebus/shared/events';
import type { ResourceRef } from '@kubebus/shared/kube';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export function sanitize(resource: ResourceRef, object: KubeObject): KubeObject {
  const { managedFields, ...metadata } = object.metadata;
  if (!(resource.group === '' && resource.resource === 'secrets')) {
    return managedFields === undefined ? object : { ...object, metadata };
  }
  const { data, stringData, ...secret } = object;
  const annotations = metadata['annotations'] as Record<string, string> | undefined;
  if (annotations !== undefined) {
    const kept = Object.entries(annotations).filter(([name]) => name !== LAST_APPLIED);
    // none left: none at all, not an empty map `kubebus history` shows as a change
    if (kept.length === 0) delete metadata['annotations'];
    else metadata['annotations'] = Object.fromEntries(kept);
  }
  return { ...secret, metadata };
}
