// What `kubebus generate` cannot derive and the operator may have forgotten:
// a binding it owns grants a role, and RBAC refuses the binding unless the
// reconciler holds every rule of that role or may `bind` it. kubebus dev and
// the test kit run as an admin, so the refusal first shows in a cluster.
import { kinds, type Operator } from '@kubebus/shared/definition';

const BINDINGS = [kinds.RoleBinding, kinds.ClusterRoleBinding];

/** One line per likely gap in the operator's declared RBAC; none when it declares what it grants. */
export function rbacWarnings(operator: Operator): string[] {
  if ((operator.rbac?.bind ?? []).length > 0) return [];
  const owned = (operator.owns ?? []).filter((kind) =>
    BINDINGS.some((binding) => binding.group === kind.group && binding.plural === kind.plural),
  );
  return owned.map(
    (kind) =>
      `operator "${operator.name}" owns ${kind.kind}s but declares no \`rbac.bind\`: a binding to a role whose rules the reconciler does not hold itself is refused ("attempting to grant RBAC permissions not currently held"); declare the roles it grants, e.g. \`rbac: { bind: [{ kind: 'ClusterRole', name: 'edit' }] }\` — or nothing, if its \`rbac.rules\` hold every rule of the roles it grants (docs/operators.md, RBAC beyond what it owns)`,
  );
}
