// The operator's namespace, enforcing the restricted Pod Security Standard:
// every generated pod meets it, and nothing else may run beside them.
import type { PackageSettings } from './settings.js';

export function namespaceOf(settings: PackageSettings): object {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: settings.namespace,
      labels: {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'latest',
      },
    },
  };
}
