import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import type { KubeObject } from '@kubebus/shared/events';
import { OWNER_ANNOTATION, ownerAnnotationOf } from '@kubebus/shared/kube';
import { isSecondController, ownershipRefusal } from './ownership.js';

const owner = (name: string, uid: string): KubeObject => ({
  apiVersion: 'platform.example.com/v1',
  kind: 'TeamSpace',
  metadata: { name, uid, resourceVersion: '1' },
});
const namespace = (metadata: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'shared', uid: 'ns-uid', resourceVersion: '5', ...metadata },
});
const controlledBy = (of: KubeObject) => ({
  ownerReferences: [
    {
      apiVersion: of.apiVersion,
      kind: of.kind,
      name: of.metadata.name,
      uid: of.metadata.uid,
      controller: true,
    },
  ],
  labels: { 'kubebus.dev/controller': 'teamspaces' },
});
const a = owner('a', 'uid-a');
const b = owner('b', 'uid-b');
const refusal = (
  current: KubeObject | undefined,
  by = b,
  labelOnly = true,
  action: 'apply' | 'delete' = 'apply',
) =>
  ownershipRefusal(current, by, {
    operator: 'teamspaces',
    describe: 'Namespace shared',
    labelOnly,
    action,
  });

describe('what ctx.apply will not take', () => {
  it('takes what does not exist, and its own', () => {
    assert.equal(refusal(undefined), undefined);
    assert.equal(refusal(namespace(controlledBy(b))), undefined);
  });

  it('refuses a child another owner controls, naming it', () => {
    assert.equal(
      refusal(namespace(controlledBy(a))),
      'Namespace shared is already controlled by TeamSpace a (uid uid-a): not taken over (two objects claim it; give one of them another name). Looked at again every 30 s',
    );
    // namespaced children too
    assert.match(refusal(namespace(controlledBy(a)), b, false) ?? '', /already controlled/);
    // as often as KUBEBUS_CLAIM_RETRY says
    const sooner = ownershipRefusal(namespace(controlledBy(a)), b, {
      operator: 'teamspaces',
      describe: 'Namespace shared',
      labelOnly: true,
      action: 'apply',
      retryMs: 3_000,
    });
    assert.match(sooner ?? '', /Looked at again every 3 s$/);
  });

  it('takes the child of an earlier life of the same owner, not another’s being deleted', () => {
    assert.equal(refusal(namespace(controlledBy(owner('b', 'uid-b-before')))), undefined);
    // taken, two owners would swap it back and forth for as long as it is Terminating
    assert.match(
      refusal(namespace({ ...controlledBy(a), deletionTimestamp: '2026-12-07T10:00:00Z' })) ?? '',
      /already controlled by TeamSpace a/,
    );
  });

  it('does not adopt a cluster-scoped object another made', () => {
    assert.match(
      refusal(namespace({ labels: { team: 'legacy' } })) ?? '',
      /^Namespace shared exists and was not made by the operator teamspaces: not adopted/,
    );
    // one this operator made and whose owner reference is gone: its own again
    assert.equal(
      refusal(namespace({ labels: { 'kubebus.dev/controller': 'teamspaces' } })),
      undefined,
    );
    // a namespaced one, as controller-runtime does, is adopted
    assert.equal(refusal(namespace({}), b, false), undefined);
  });

  it('tells two owners apart by the annotation where no owner reference can go', () => {
    // namespaced owners of a cluster-scoped child: only the annotation says whose it is
    const project = (namespace: string, uid: string): KubeObject => ({
      apiVersion: 'platform.example.com/v1',
      kind: 'Project',
      metadata: { name: 'web', namespace, uid, resourceVersion: '1' },
    });
    const teamA = project('team-a', 'uid-pa');
    assert.equal(ownerAnnotationOf(teamA), 'Project.platform.example.com team-a/web');
    const appliedFor = (of: KubeObject) =>
      namespace({
        labels: { 'kubebus.dev/controller': 'teamspaces' },
        annotations: { [OWNER_ANNOTATION]: ownerAnnotationOf(of) },
      });
    assert.equal(
      refusal(appliedFor(teamA), project('team-b', 'uid-pb')),
      'Namespace shared was applied for Project.platform.example.com team-a/web: not taken over (two objects claim it; give one of them another name). Looked at again every 30 s',
    );
    // its own, and an earlier life's (the same kind, namespace and name)
    assert.equal(refusal(appliedFor(teamA), teamA), undefined);
    assert.equal(refusal(appliedFor(teamA), project('team-a', 'uid-pa-again')), undefined);
    // applied for it by the operator under its earlier name: still its own
    const renamed = namespace({
      labels: { 'kubebus.dev/controller': 'projects-v1' },
      annotations: { [OWNER_ANNOTATION]: ownerAnnotationOf(teamA) },
    });
    assert.equal(refusal(renamed, teamA), undefined);
    assert.equal(refusal(renamed, teamA, true, 'delete'), undefined);
  });
});

describe('what ctx.delete will not delete', () => {
  it('deletes its own and what is gone', () => {
    assert.equal(refusal(undefined, b, true, 'delete'), undefined);
    assert.equal(refusal(namespace(controlledBy(b)), b, true, 'delete'), undefined);
    // one it made (its label) whose owner reference is gone
    assert.equal(
      refusal(namespace({ labels: { 'kubebus.dev/controller': 'teamspaces' } }), b, true, 'delete'),
      undefined,
    );
  });

  it('refuses another owner’s child and a cluster-scoped object another made', () => {
    assert.match(
      refusal(namespace(controlledBy(a)), b, false, 'delete') ?? '',
      /^Namespace shared is already controlled by TeamSpace a \(uid uid-a\): not deleted/,
    );
    assert.equal(
      refusal(namespace({ labels: { team: 'legacy' } }), b, true, 'delete'),
      "Namespace shared was not made by the operator teamspaces: not deleted (it is not this TeamSpace's; label it app.kubernetes.io/managed-by=kubebus kubebus.dev/controller=teamspaces to hand it over).",
    );
  });
});

test("the apiserver's refusal of a second controller reference is found, wrapped or not", () => {
  const refused = Object.assign(
    new Error(
      'apiserver answered 422 Invalid: ConfigMap "kept" is invalid: metadata.ownerReferences: Invalid value: […]: Only one reference can have Controller set to true. Found "true" in references for Deployment/other and Keeper/held',
    ),
    { status: 422 },
  );
  assert.equal(isSecondController(refused), true);
  assert.equal(isSecondController(new Error('reconcile failed', { cause: refused })), true);
  // another 422, or the words without the status
  assert.equal(
    isSecondController(Object.assign(new Error('spec.x: Invalid value'), { status: 422 })),
    false,
  );
  assert.equal(
    isSecondController(new Error('Only one reference can have Controller set to true')),
    false,
  );
});
