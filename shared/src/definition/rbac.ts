// What the operator's RBAC needs beyond what `for`, `owns` and `watches`
// imply: the roles its bindings grant (`bind`), the roles it writes with
// rules it does not hold itself (`escalate`), and rules for calls it makes
// on its own. Kubernetes refuses a RoleBinding to a role whose rules the
// writer neither holds nor may `bind` ("attempting to grant RBAC permissions
// not currently held"); `kubebus generate` turns this into exactly those
// grants, on exactly the roles named, and nothing broader.
import type { Resource } from './resource.js';

/** A role named in a roleRef: a ClusterRole, or a Role (of that name in any namespace). */
export interface RoleReference {
  readonly kind: 'ClusterRole' | 'Role';
  readonly name: string;
  /**
   * bind only, a ClusterRole only: it may also be granted cluster-wide, by a
   * ClusterRoleBinding (in every namespace, kube-system included). Without it
   * the generated admission policy refuses that: RoleBindings only.
   */
  readonly clusterWide?: boolean;
}

/** Verbs an extra rule may grant; `bind` and `escalate` go through `bind` and `escalate`. */
const RULE_VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'approve',
  'sign',
  'use',
] as const;
export type RuleVerb = (typeof RULE_VERBS)[number];

/** A rule of the reconciler's role, in the terms of a Kubernetes PolicyRule. */
export interface RbacRule {
  /** '' is the core group (pods, configmaps, …) */
  readonly apiGroups: readonly string[];
  /** plural resource names, with '/subresource' where one is meant (pods/log) */
  readonly resources: readonly string[];
  readonly verbs: readonly RuleVerb[];
  /**
   * only these objects: with get, update, patch or delete. Refused with list,
   * watch, create and deletecollection, which Kubernetes does not limit by name
   * (a create has no name yet; a list without a name selector lists them all).
   */
  readonly resourceNames?: readonly string[];
}

export interface OperatorRbac {
  /**
   * Roles the RoleBindings and ClusterRoleBindings it owns refer to: the
   * reconciler gets `bind` on exactly these, so it may grant them without
   * holding their rules.
   */
  readonly bind?: readonly RoleReference[];
  /**
   * Roles and ClusterRoles it owns whose rules it does not hold itself: the
   * reconciler gets `escalate` on exactly these names. Without it, it must
   * hold every rule it writes into them (declare them in `rules`).
   */
  readonly escalate?: readonly RoleReference[];
  /** extra rules for the reconciler (calls it makes with its own client, say) */
  readonly rules?: readonly RbacRule[];
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const GRANTABLE: ReadonlySet<string> = new Set(RULE_VERBS);
/** Verbs resourceNames does not limit: a rule with both would read as narrower than it is. */
const NOT_BY_NAME: ReadonlySet<string> = new Set<RuleVerb>([
  'list',
  'watch',
  'create',
  'deletecollection',
]);

function fail(what: string): never {
  throw new TypeError(`defineOperator: rbac.${what}`);
}

/** A name the apiserver takes in a path segment (role names may hold ':'). */
function checkName(name: string, where: string): void {
  if (name === '' || name === '.' || name === '..' || /[/%*\s]/.test(name))
    fail(`${where}: "${name}" is not a role name (no '/', '%', '*' or spaces)`);
}

function owned(owns: readonly Resource[], plural: string): boolean {
  return owns.some((resource) => resource.group === RBAC_GROUP && resource.plural === plural);
}

function checkReferences(
  references: readonly RoleReference[],
  field: 'bind' | 'escalate',
  owns: readonly Resource[],
): void {
  for (const [i, reference] of references.entries()) {
    const where = `${field}[${i}]`;
    // the type says so; a JavaScript definition may still say otherwise
    const kind: string = reference.kind;
    if (kind !== 'ClusterRole' && kind !== 'Role')
      fail(`${where}.kind must be 'ClusterRole' or 'Role'`);
    checkName(reference.name, `${where}.name`);
    const clusterWide = reference.clusterWide === true;
    if (clusterWide && (field !== 'bind' || reference.kind !== 'ClusterRole'))
      fail(`${where}.clusterWide: only a ClusterRole in bind is granted cluster-wide`);
    if (clusterWide && !owned(owns, 'clusterrolebindings'))
      fail(
        `${where}: granting ${reference.name} cluster-wide needs kinds.ClusterRoleBinding in owns`,
      );
    if (field === 'bind') {
      // a Role can only be granted by a RoleBinding; a ClusterRole by either binding,
      // by a ClusterRoleBinding only where declared clusterWide (the admission policy)
      if (!owned(owns, 'rolebindings') && !clusterWide)
        fail(
          `${where}: binding ${reference.kind} ${reference.name} needs kinds.RoleBinding in owns${reference.kind === 'ClusterRole' ? ' (or kinds.ClusterRoleBinding and clusterWide: true)' : ''}`,
        );
    } else if (!owned(owns, reference.kind === 'Role' ? 'roles' : 'clusterroles')) {
      fail(
        `${where}: escalating ${reference.kind} ${reference.name} needs kinds.${reference.kind} in owns`,
      );
    }
  }
}

function checkRule(rule: RbacRule, where: string): void {
  const lists: Record<string, readonly string[]> = {
    apiGroups: rule.apiGroups,
    resources: rule.resources,
    verbs: rule.verbs,
  };
  for (const [field, values] of Object.entries(lists)) {
    if (!Array.isArray(values) || values.length === 0) fail(`${where}.${field} must not be empty`);
    // a wildcard also grants what is added later (bind, escalate, new resources,
    // every subresource with '*/status' or 'pods/*'): name them
    if (values.some((value) => String(value).includes('*')))
      fail(`${where}.${field}: name them instead of '*'`);
  }
  for (const verb of rule.verbs as readonly string[])
    if (!GRANTABLE.has(verb))
      fail(
        `${where}.verbs: "${verb}" is not grantable here${verb === 'bind' || verb === 'escalate' ? ` (declare the roles in rbac.${verb})` : ''}`,
      );
  if (rule.resourceNames !== undefined) {
    const unlimited = rule.verbs.filter((verb) => NOT_BY_NAME.has(verb));
    if (unlimited.length > 0)
      fail(
        `${where}: resourceNames does not limit ${unlimited.join(', ')}: put ${unlimited.length === 1 ? 'it' : 'them'} in a rule without resourceNames`,
      );
    for (const name of rule.resourceNames) checkName(name, `${where}.resourceNames`);
  }
}

/** bind and escalate on one role write it with any rule and grant it: cluster-admin. */
function checkApart(rbac: OperatorRbac): void {
  const escalated = new Set((rbac.escalate ?? []).map((reference) => reference.name));
  for (const [i, reference] of (rbac.bind ?? []).entries())
    if (escalated.has(reference.name))
      fail(
        `bind[${i}]: "${reference.name}" is in escalate too: the reconciler could write any rule into it and grant it (cluster-admin); bind a role it does not write`,
      );
}

/** Throws one line naming the field when the declaration cannot become sound RBAC. */
export function checkRbac(rbac: OperatorRbac, owns: readonly Resource[]): void {
  checkReferences(rbac.bind ?? [], 'bind', owns);
  checkReferences(rbac.escalate ?? [], 'escalate', owns);
  checkApart(rbac);
  for (const [i, rule] of (rbac.rules ?? []).entries()) checkRule(rule, `rules[${i}]`);
}
