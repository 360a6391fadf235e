// What `kubebus generate` cannot derive and the operator may have forgotten:
// a binding it owns grants a role, and RBAC refuses the binding unless the
// reconciler holds every rule of that role or may `bind` it; a role it owns
// is refused the same way unless it holds every rule it writes or may
// `escalate` it. kubebus dev and the test kit run as an admin, so the
// refusal first shows in a cluster. And what it grants that reads more than
// it looks: list and watch of Secrets, which return their values, and a rule
// of its own reading Secrets by no name.
import { declaredResources, kinds, type Operator } from '@kubebus/shared/definition';

const BINDINGS = [kinds.RoleBinding, kinds.ClusterRoleBinding];
const ROLES = [kinds.Role, kinds.ClusterRole];

/** One line per likely gap in the operator's declared RBAC; none when it declares what it grants. */
export function rbacWarnings(
  operator: Operator,
  watchNamespaces: readonly string[] = [],
): string[] {
  return [
    ...bindingWarnings(operator),
    ...roleWarnings(operator),
    ...secretWarnings(operator, watchNamespaces),
    ...secretRuleWarnings(operator, watchNamespaces),
  ];
}

/** Verbs that answer a Secret's values. */
const READS = new Set(['get', 'list', 'watch', '*']);

/**
 * A rule of the operator's own that reads Secrets by no name (a Secret named
 * in a spec cannot be narrowed to it): a ClusterRole, so the reconciler's
 * token reads every Secret of the cluster, kube-system's too, whatever
 * ctx.readSecret refuses at run time.
 */
function secretRuleWarnings(operator: Operator, watchNamespaces: readonly string[]): string[] {
  if (watchNamespaces.length > 0) return [];
  const reads = (operator.rbac?.rules ?? []).some(
    (rule) =>
      rule.apiGroups.some((group) => group === '' || group === '*') &&
      rule.resources.some((resource) => resource === 'secrets' || resource === '*') &&
      rule.verbs.some((verb) => READS.has(verb)) &&
      (rule.resourceNames ?? []).length === 0,
  );
  if (!reads) return [];
  return [
    `operator "${operator.name}" declares a rule reading Secrets by no name (\`rbac.rules\`): its reconciler's ServiceAccount may read every Secret in every namespace of the cluster, kube-system's too (ctx.readSecret keeps to the object's namespace, the token does not). Name them (\`resourceNames\`) where you can, or run with --watch-namespaces to grant it in those namespaces only (docs/security.md, Watched Secrets)`,
  ];
}

/**
 * A watched or owned Secret kind: the watcher lists and watches Secrets, and
 * Kubernetes has no metadata-only list — its ServiceAccount may read every
 * Secret's values where it watches (the watcher itself drops them).
 */
function secretWarnings(operator: Operator, watchNamespaces: readonly string[]): string[] {
  const isSecret = (kind: { group: string; plural: string }) =>
    kind.group === kinds.Secret.group && kind.plural === kinds.Secret.plural;
  if (!declaredResources(operator).some(isSecret)) return [];
  // a kind only owned is watched by kubebus' label alone; one in `watches`, whole
  const watched = (operator.watches ?? []).some((watch) => isSecret(watch.resource));
  const where =
    watchNamespaces.length === 0
      ? 'in every namespace of the cluster (--watch-namespaces limits it to those named)'
      : `in ${watchNamespaces.join(', ')}`;
  const recorded = watched
    ? 'the bus records every Secret there without them'
    : 'the bus records only the Secrets it made, without them';
  return [
    `operator "${operator.name}" ${watched ? 'watches' : 'owns'} Secrets: its watcher's ServiceAccount may list and watch them ${where}, and a list returns their values (RBAC has no metadata-only list; the watcher drops the values, and ${recorded}). Guard that ServiceAccount's token as you would the Secrets (docs/security.md, Watched Secrets)`,
  ];
}

function ownedOf(operator: Operator, among: readonly { group: string; plural: string }[]) {
  return (operator.owns ?? []).filter((kind) =>
    among.some((known) => known.group === kind.group && known.plural === kind.plural),
  );
}

function roleWarnings(operator: Operator): string[] {
  if ((operator.rbac?.escalate ?? []).length > 0) return [];
  return ownedOf(operator, ROLES).map(
    (kind) =>
      `operator "${operator.name}" owns ${kind.kind}s but declares no \`rbac.escalate\`: a role with a rule the reconciler does not hold itself is refused ("attempting to grant RBAC permissions not currently held"); declare the roles it writes, e.g. \`rbac: { escalate: [{ kind: '${kind.kind}', name: 'tenant-reader' }] }\` — or nothing, if its \`rbac.rules\` hold every rule the roles get (docs/operators.md, RBAC beyond what it owns)`,
  );
}

function bindingWarnings(operator: Operator): string[] {
  if ((operator.rbac?.bind ?? []).length > 0) return [];
  return ownedOf(operator, BINDINGS).map(
    (kind) =>
      `operator "${operator.name}" owns ${kind.kind}s but declares no \`rbac.bind\`: a binding to a role whose rules the reconciler does not hold itself is refused ("attempting to grant RBAC permissions not currently held"); declare the roles it grants, e.g. \`rbac: { bind: [{ kind: 'ClusterRole', name: 'edit' }] }\` — or nothing, if its \`rbac.rules\` hold every rule of the roles it grants (docs/operators.md, RBAC beyond what it owns)`,
  );
}
