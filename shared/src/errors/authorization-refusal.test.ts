// The apiserver's 403s as kube-apiserver 1.37 answers them (the bodies below
// are copied from the test bed): the operator's own RBAC refusing is told
// apart from a refusal of the object's content, and told as what to do.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiErrorFrom } from '../kube/api-error.js';
import {
  authorizationRefusal,
  conciseRefusal,
  explainRefusal,
  explainRefused,
  refusalAdvice,
} from './authorization-refusal.js';
import { classifyFailure } from './failure-class.js';

const USER = 'system:serviceaccount:kubebus-system:kubebus-tenant-reconciler';
const GROUPS =
  '(groups=["system:serviceaccounts" "system:serviceaccounts:kubebus-system" "system:authenticated"])';

const status = (message: string, reason = 'Forbidden', details: object = {}) =>
  JSON.stringify({ kind: 'Status', status: 'Failure', message, reason, details, code: 403 });

const notAllowed = `limitranges "tenant-defaults" is forbidden: User "${USER}" cannot patch resource "limitranges" in API group "" in the namespace "team-a"`;
const notHeld = [
  `rolebindings.rbac.authorization.k8s.io "tenant-admins" is forbidden: user "${USER}" ${GROUPS} is attempting to grant RBAC permissions not currently held:`,
  '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete" "list"]}',
  '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "watch" "create" "delete"]}',
  '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}',
].join('\n');

describe('an RBAC refusal', () => {
  it('is told in time linear in a long message', () => {
    const long = status(`${'x'.repeat(80_000)} is forbidden: no`);
    const started = performance.now();
    assert.equal(classifyFailure(apiErrorFrom(403, long, {})), 'object');
    // seconds before the patterns were anchored; a generous bound for a loaded machine
    assert.ok(performance.now() - started < 2_000, 'an 80 KB message is classed at once');
  });

  it('is the operator’s RBAC refusing, not the object’s fault: waited out', () => {
    const refused = [
      notAllowed,
      `limitranges is forbidden: User "${USER}" cannot create resource "limitranges" in API group "" in the namespace "team-a"`,
      `clusterroles.rbac.authorization.k8s.io "foo" is forbidden: User "${USER}" cannot patch resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
      `forbidden: User "${USER}" cannot get path "/metrics"`,
      notHeld,
    ];
    for (const message of refused)
      assert.equal(classifyFailure(apiErrorFrom(403, status(message), {})), 'forbidden', message);
  });

  it('is not a denial of the object’s content: a webhook, an admission policy, a quota', () => {
    const denials = [
      // a ValidatingAdmissionPolicy whose validation's reason is Forbidden
      status(
        `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'no-bad' with binding 'no-bad' denied request: no bad keys`,
      ),
      // an admission webhook answering code 403 (the apiserver adds no reason)
      JSON.stringify({
        kind: 'Status',
        status: 'Failure',
        message: 'admission webhook "deny.probe.dev" denied the request: tenants may not use this',
        code: 403,
      }),
      status(
        'pods "web" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=4, limited: cpu=4',
      ),
      status(
        'pods "web" is forbidden: violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true)',
      ),
    ];
    // the authorizer's words inside a webhook's or a policy's own message (which may echo the object)
    denials.push(
      JSON.stringify({
        kind: 'Status',
        message: `admission webhook "deny.example.com" denied the request: forbidden: User "x" cannot patch resource "y" in API group "" at the cluster scope`,
        code: 403,
      }),
      status(
        `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: owner x is forbidden: user "bob" is attempting to grant RBAC permissions not currently held`,
      ),
      status(
        `admission webhook "kyverno" denied the request:\n\npolicy team: team is forbidden: User "x" cannot get path "/"`,
      ),
    );
    for (const body of denials)
      assert.equal(classifyFailure(apiErrorFrom(403, body, {})), 'object', body);
    // the same words in another answer than a 403 are no refusal of the operator's
    assert.equal(
      classifyFailure(apiErrorFrom(400, status(notAllowed, 'BadRequest'), {})),
      'object',
    );
  });

  it('names what was refused, and for an escalation how many rules', () => {
    assert.deepEqual(authorizationRefusal(notAllowed), {
      kind: 'not-allowed',
      user: USER,
      verb: 'patch',
      what: 'limitranges in the namespace "team-a"',
    });
    assert.deepEqual(authorizationRefusal(notHeld), {
      kind: 'not-held',
      user: USER,
      resource: 'rolebindings.rbac.authorization.k8s.io',
      missingRules: 3,
    });
    assert.equal(authorizationRefusal('admission webhook "x" denied the request: no'), undefined);
  });

  it('keeps the first line of an escalation refusal and the count, not the list', () => {
    const concise = conciseRefusal(`apiserver answered 403 Forbidden: ${notHeld}`);
    assert.equal(
      concise,
      `apiserver answered 403 Forbidden: rolebindings.rbac.authorization.k8s.io "tenant-admins" is forbidden: user "${USER}" ${GROUPS} is attempting to grant RBAC permissions not currently held (3 rules not held)`,
    );
    assert.doesNotMatch(concise, /\n|APIGroups/);
    // the count survives shortening: read again, it is the same refusal
    assert.equal(authorizationRefusal(concise)?.kind, 'not-held');
    assert.deepEqual(authorizationRefusal(concise), authorizationRefusal(notHeld));
    assert.equal(conciseRefusal(notAllowed), notAllowed);
  });

  it('says what to apply, or what to declare for the role a binding grants', () => {
    const missing = authorizationRefusal(notAllowed);
    assert.ok(missing !== undefined);
    assert.equal(
      refusalAdvice(missing),
      'the operator\'s RBAC does not let it patch limitranges in the namespace "team-a": apply the RBAC `kubebus generate` writes for this version of the operator (or declare the rule in `rbac.rules`)',
    );
    const binding = authorizationRefusal(notHeld);
    assert.ok(binding !== undefined);
    assert.match(
      refusalAdvice(binding, { kind: 'ClusterRole', name: 'admin' }),
      /^the operator may not grant ClusterRole admin, whose rules it does not hold \(3 missing\); if it is meant to, declare `rbac: \{ bind: \[\{ kind: 'ClusterRole', name: 'admin' \}\] \}`, then apply the RBAC `kubebus generate` writes/,
    );
    // declared, but not in the RBAC applied: apply it, nothing to declare
    const declared = refusalAdvice(binding, { kind: 'ClusterRole', name: 'edit', declared: true });
    assert.match(
      declared,
      /^the operator may not grant ClusterRole edit, whose rules it does not hold \(3 missing\); it declares it in `rbac\.bind`, but the RBAC applied in the cluster does not grant that: apply the RBAC `kubebus generate` writes/,
    );
    assert.doesNotMatch(declared, /if it is meant to/);
    // without the role at hand: where to declare it, by example
    assert.match(
      refusalAdvice(binding),
      /`rbac\.bind` \(e\.g\. `rbac: \{ bind: \[\{ kind: 'ClusterRole', name: 'edit' \}\] \}`\)/,
    );
    // a ClusterRoleBinding grants the role cluster-wide, which bind must say
    const clusterWide = authorizationRefusal(
      notHeld.replace('rolebindings.', 'clusterrolebindings.'),
    );
    assert.ok(clusterWide !== undefined);
    assert.match(
      refusalAdvice(clusterWide, { kind: 'ClusterRole', name: 'view' }),
      /name: 'view', clusterWide: true \}/,
    );
    // a role written with rules it does not hold: escalate, or the rules themselves
    const role = authorizationRefusal(notHeld.replace('rolebindings.', 'roles.'));
    assert.ok(role !== undefined);
    assert.match(
      refusalAdvice(role, { kind: 'Role', name: 'tenant-reader' }),
      /may not write Role tenant-reader, .*`rbac: \{ escalate: \[\{ kind: 'Role', name: 'tenant-reader' \}\] \}` \(or its rules in `rbac.rules`\)/,
    );
  });

  it('is explained once: advice first, then the apiserver’s words without the list', () => {
    const raw = apiErrorFrom(403, status(notHeld), {}).message;
    const explained = explainRefusal(raw, { kind: 'ClusterRole', name: 'admin' });
    assert.match(explained, /^the operator may not grant ClusterRole admin, /);
    assert.match(explained, /; retried until then: apiserver answered 403 Forbidden: rolebindings/);
    assert.doesNotMatch(explained, /\n/);
    assert.equal(explainRefusal(explained), explained);
    // what it says is still an RBAC refusal (classified the same when thrown again)
    assert.equal(classifyFailure(apiErrorFrom(403, status(explained), {})), 'forbidden');
    assert.equal(explainRefusal('boom'), 'boom');
  });
});

describe('an error RBAC refused somewhere in its causes', () => {
  it('is shown with the refusal explained after its own message', () => {
    const refusal = apiErrorFrom(403, status(notAllowed), {});
    const wrapped = new Error('syncing the quota failed', { cause: refusal });
    assert.match(
      explainRefused(wrapped),
      /^syncing the quota failed: the operator's RBAC does not let it patch limitranges in the namespace "team-a": apply the RBAC/,
    );
    assert.equal(explainRefused(refusal), explainRefusal(refusal.message));
    // nothing refused: as it is
    assert.equal(explainRefused(new Error('boom', { cause: new Error('x') })), 'boom');
    assert.equal(explainRefused('text'), 'text');
  });
});
