// A request the operator's own RBAC does not allow, read off the apiserver's
// 403: the authorizer's `User "…" cannot <verb> resource "…"`, and RBAC's
// escalation check — a binding or role granting what its writer does not
// hold ("attempting to grant RBAC permissions not currently held", followed
// by one line per missing rule). Neither says anything of the object: an
// admin fixes them by applying the operator's RBAC, and the request then
// goes through. A webhook's or an admission policy's denial names no User and
// is not one of these. Both shapes as kube-apiserver 1.37 answers them
// (test/e2e/forbidden-retry.test.ts).

/** The role a binding grants (its roleRef), or a role being written. */
export interface GrantedRole {
  readonly kind: string;
  readonly name: string;
  /** the operator declares it (rbac.bind or rbac.escalate): the RBAC applied lacks it */
  readonly declared?: boolean;
}

export type AuthorizationRefusal =
  /** RBAC allows the account no such request */
  | {
      readonly kind: 'not-allowed';
      readonly user: string;
      readonly verb: string;
      /** `limitranges in the namespace "team-a"`, `clusterroles.rbac.authorization.k8s.io at the cluster scope`, `path "/metrics"` */
      readonly what: string;
    }
  /** the binding or role written would grant rules the account does not hold */
  | {
      readonly kind: 'not-held';
      readonly user: string;
      /** what was written: `rolebindings.rbac.authorization.k8s.io` */
      readonly resource: string;
      readonly missingRules: number;
    };

// Anchored at the start of the apiserver's own words: a webhook's or a
// policy's message is written by whoever wrote it (and may echo the object),
// so the same words later in it are no refusal of the operator's. Names hold
// no quotes or line breaks; bounded classes keep the match linear.
const NOT_ALLOWED =
  /^(?:[a-z0-9.-]+(?: "[^"\n]*")? is )?forbidden: User "([^"\n]*)" cannot ([a-z]+) (?:resource "([^"\n]+)" in API group "([^"\n]*)" (?:in the namespace "([^"\n]*)"|at the cluster scope)|path "([^"\n]*)")/;
const NOT_HELD =
  /^([a-z0-9.-]+)(?: "[^"\n]*")? is forbidden: user "([^"\n]*)"(?: \(groups=\[[^\]\n]*\]\))? is attempting to grant RBAC permissions not currently held/;
/** What KubeApiError puts before the apiserver's message. */
const ANSWERED = /^apiserver answered 403(?: [A-Za-z]+)?: /;
/** The apiserver's words are looked at only this far: a message may be megabytes. */
const LOOKED_AT = 4_096;
/** How an escalation refusal's count of missing rules reads once its list is dropped. */
const COUNTED = / \((\d+) rules? not held\)/;
/** What every explained refusal carries: it is not explained twice. */
const EXPLAINED = '; retried until then: ';

/** The apiserver's own words: after KubeApiError's prefix, or after an explanation given already. */
function apiserverWords(message: string): string {
  const explained = message.indexOf(EXPLAINED);
  const words = explained >= 0 ? message.slice(explained + EXPLAINED.length) : message;
  return words.slice(0, LOOKED_AT).replace(ANSWERED, '');
}

export function authorizationRefusal(whole: string): AuthorizationRefusal | undefined {
  const message = apiserverWords(whole);
  const notAllowed = NOT_ALLOWED.exec(message);
  if (notAllowed !== null) {
    const [, user = '', verb = '', resource, group = '', namespace, path] = notAllowed;
    const where =
      namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`;
    const what =
      resource === undefined
        ? `path "${path ?? ''}"`
        : `${group === '' ? resource : `${resource}.${group}`} ${where}`;
    return { kind: 'not-allowed', user, verb, what };
  }
  const notHeld = NOT_HELD.exec(message);
  if (notHeld === null) return undefined;
  const [, resource = '', user = ''] = notHeld;
  const counted = COUNTED.exec(message);
  const missingRules =
    counted === null ? ruleLines(whole).length : Number.parseInt(counted[1] ?? '0', 10);
  return { kind: 'not-held', user, resource, missingRules };
}

/** The lines of an escalation refusal that each name one missing rule. */
function ruleLines(message: string): string[] {
  return message.split('\n').filter((line) => line.startsWith('{'));
}

/**
 * The message without an escalation refusal's list of missing rules (dozens
 * of lines for a bootstrap role): its first line and how many there are.
 */
export function conciseRefusal(message: string): string {
  const rules = ruleLines(message);
  if (rules.length === 0 || authorizationRefusal(message)?.kind !== 'not-held') return message;
  const [first = ''] = message.split('\n');
  return `${first.replace(/:\s*$/, '')} (${String(rules.length)} ${rules.length === 1 ? 'rule' : 'rules'} not held)`;
}

const APPLY_RBAC = 'apply the RBAC `kubebus generate` writes for this version of the operator';

/** What an admin does about the refusal; `role` is the role the refused write grants or is. */
export function refusalAdvice(refusal: AuthorizationRefusal, role?: GrantedRole): string {
  if (refusal.kind === 'not-allowed')
    return `the operator's RBAC does not let it ${refusal.verb} ${refusal.what}: ${APPLY_RBAC} (or declare the rule in \`rbac.rules\`)`;
  const writesRole = /^(cluster)?roles\./.test(refusal.resource);
  const field = writesRole ? 'escalate' : 'bind';
  if (role === undefined)
    return `the operator may not grant rules it does not hold (${String(refusal.missingRules)}): declare the role it ${writesRole ? 'writes' : 'binds'} in \`rbac.${field}\` (${writesRole ? 'or its rules in `rbac.rules`' : "e.g. `rbac: { bind: [{ kind: 'ClusterRole', name: 'edit' }] }`"}), then ${APPLY_RBAC}`;
  // a ClusterRole granted by a ClusterRoleBinding: in every namespace, which bind must say
  const clusterWide = /^clusterrolebindings\./.test(refusal.resource) ? ', clusterWide: true' : '';
  // declared already: the cluster has an older RBAC (or one edited since), not the definition's
  if (role.declared === true)
    return `the operator may not ${writesRole ? 'write' : 'grant'} ${role.kind} ${role.name}, whose rules it does not hold (${String(refusal.missingRules)} missing); it declares it in \`rbac.${field}\`${clusterWide === '' ? '' : ' (clusterWide)'}, but the RBAC applied in the cluster does not grant that: ${APPLY_RBAC}`;
  // the role is the object's choice (a spec may name it): the refusal may be the point
  return `the operator may not ${writesRole ? 'write' : 'grant'} ${role.kind} ${role.name}, whose rules it does not hold (${String(refusal.missingRules)} missing); if it is meant to, declare \`rbac: { ${field}: [{ kind: '${role.kind}', name: '${role.name}'${clusterWide} }] }\`${writesRole ? ' (or its rules in `rbac.rules`)' : ''}, then ${APPLY_RBAC}; if not, change the object`;
}

/**
 * The refusal as it is shown (Ready condition, Event, log line, `kubebus
 * status`): what to do first, then the apiserver's words without the list of
 * missing rules. Anything else, or a message explained already, as it is.
 */
export function explainRefusal(message: string, role?: GrantedRole): string {
  if (message.includes(EXPLAINED)) return message;
  const refusal = authorizationRefusal(message);
  if (refusal === undefined) return message;
  return `${refusalAdvice(refusal, role)}${EXPLAINED}${conciseRefusal(message)}`;
}

/**
 * An error as it is shown when RBAC refused it somewhere in its causes (a
 * user's `new Error('sync failed', { cause })` around the apiserver's 403):
 * the refusal explained, after the outer message; else the message as it is.
 */
export function explainRefused(error: unknown): string {
  const outer = error instanceof Error ? error.message : String(error);
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && depth < 8; depth++, e = e.cause) {
    if (authorizationRefusal(e.message) === undefined && !e.message.includes(EXPLAINED)) continue;
    const explained = explainRefusal(e.message);
    return e === error ? explained : `${outer}: ${explained}`;
  }
  return outer;
}
