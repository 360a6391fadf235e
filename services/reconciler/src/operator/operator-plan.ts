// An operator as the reconciler service runs it: its setup made once, then
// the generic operator reconciler over the process' shared clients.
import {
  declaredResources,
  type Operator,
  type OperatorHost,
  type Resource,
} from '@kubebus/shared/definition';
import type { KnownResource } from '../knative-event.js';
import type { ReconcilerPlan } from '../reconciler-service.js';
import { OperatorReconciler } from './operator-reconciler.js';

export async function operatorPlan(
  operator: Operator,
  host: OperatorHost,
): Promise<ReconcilerPlan> {
  const deps: unknown = await operator.setup?.(host);
  return {
    primary: knownOf(operator.for),
    resources: declaredResources(operator).map(knownOf),
    build: (tools) => new OperatorReconciler(operator, { ...tools, deps }),
  };
}

function knownOf(resource: Resource): KnownResource {
  return {
    group: resource.group,
    version: resource.version,
    resource: resource.plural,
    kind: resource.kind,
    namespaced: resource.scope === 'Namespaced',
  };
}
