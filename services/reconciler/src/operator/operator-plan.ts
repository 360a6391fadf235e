// An operator as the reconciler service runs it: its setup made once, then
// the generic operator reconciler over the process' shared clients.
import type { Operator, OperatorHost } from 'kubebus';
import type { ReconcilerPlan } from '../reconciler-service.js';
import { OperatorReconciler } from './operator-reconciler.js';

export async function operatorPlan(
  operator: Operator,
  host: OperatorHost,
): Promise<ReconcilerPlan> {
  const deps: unknown = await operator.setup?.(host);
  return {
    primary: { group: operator.for.group, resource: operator.for.plural, kind: operator.for.kind },
    build: (tools) => new OperatorReconciler(operator, { ...tools, deps }),
  };
}
