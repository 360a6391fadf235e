// A PodDisruptionBudget per role: a node drain or an upgrade takes one pod of
// each at a time, so the reconcilers hand their partitions over instead of
// all stopping at once.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { operatorLabels, roleObjectName, selectorLabels } from './names.js';
import type { PackageSettings } from './settings.js';

export function disruptionBudgetsOf(
  operator: Operator,
  roles: readonly Role[],
  settings: PackageSettings,
): object[] {
  return roles.map((role) => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: roleObjectName(operator, role),
      namespace: settings.namespace,
      labels: {
        ...operatorLabels(operator),
        ...selectorLabels(operator, role),
        ...settings.extraLabels,
      },
    },
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(operator, role) } },
  }));
}
