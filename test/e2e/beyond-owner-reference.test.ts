// A namespaced owner with a child in another namespace (a Project registering
// itself with a ConfigMap in a shared namespace, and deleting it in finalize),
// on the test kit's real servers. No owner reference can point across
// namespaces: the kubebus.dev/owner annotation says which Project applied it, so
// its changes reconcile that Project (drift repaired), a second Project naming
// it is refused instead of taking it, and neither a finalize nor any ctx.delete
// deletes one another Project or an admin made.
import { kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeClient, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import projects, { Project, REGISTRY } from '../support/operators/projects.js';
import { waitFor } from '../support/wait.js';

const OWNER = 'kubebus.dev/owner';

describe('children beyond an owner reference’s reach', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Project);
    await env.run(projects);
    for (const name of ['team-a', 'team-b', REGISTRY])
      await env.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(() => env.stop());

  const project = (namespace: string, name: string, entry: string) =>
    env.apply({
      apiVersion: 'projects.test.kubebus.dev/v1',
      kind: 'Project',
      metadata: { name, namespace },
      spec: { entry },
    });
  const entry = (name: string) => env.get(kinds.ConfigMap, name, REGISTRY);
  const gone = (namespace: string, name: string) =>
    waitFor(
      async () => (await env.get(Project, name, namespace)) === undefined,
      `Project ${namespace}/${name} to go`,
    );
  const refused = { type: 'Ready', status: 'False', reason: 'AlreadyOwned' };

  it('says which Project applied a child, and refuses it to another', async () => {
    await project('team-a', 'web', 'web');
    await env.waitForCondition(Project, 'web', { type: 'Ready' }, { namespace: 'team-a' });
    const made = await entry('web');
    assert.equal(
      made?.metadata.annotations?.[OWNER],
      'Project.projects.test.kubebus.dev team-a/web',
    );
    assert.deepEqual(made?.data, { project: 'team-a/web' });
    // its changes reconcile its Project by the annotation: drift repaired, a deletion undone
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web', namespace: REGISTRY },
      data: { project: 'edited' },
    });
    await waitFor(
      async () => (await entry('web'))?.data?.['project'] === 'team-a/web',
      'the edited entry repaired',
    );
    await env.delete(kinds.ConfigMap, 'web', REGISTRY);
    await waitFor(async () => (await entry('web')) !== undefined, 'the deleted entry made again');

    // the same operator, another Project: both would apply it as their own with one
    // field manager, each in turn, and either's finalize would delete it
    await project('team-b', 'web', 'web');
    const taken = await env.waitForCondition(Project, 'web', refused, { namespace: 'team-b' });
    assert.equal(
      taken.message,
      `ConfigMap ${REGISTRY}/web was applied for Project.projects.test.kubebus.dev team-a/web: not taken over (two objects claim it; give one of them another name). Looked at again every 30 s`,
    );
    assert.deepEqual((await entry('web'))?.data, { project: 'team-a/web' });
  });

  it('deletes only what its own Project applied', async () => {
    // team-b's finalize deletes its entry: not its own, answered absent, kept
    await env.delete(Project, 'web', 'team-b');
    await gone('team-b', 'web');
    // and said where kubectl describe shows it
    const admin = new KubeClient(
      await loadKubeConfig(env.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
    await waitFor(async () => {
      const events = await admin.request<{
        items: { type: string; reason: string; regarding: { name: string }; note: string }[];
      }>('/apis/events.k8s.io/v1/namespaces/team-b/events');
      return events.items.some(
        (event) =>
          event.type === 'Warning' &&
          event.reason === 'NotDeleted' &&
          event.regarding.name === 'web' &&
          event.note.startsWith(
            `ctx.delete answered 'absent': ConfigMap ${REGISTRY}/web was applied for Project.projects.test.kubebus.dev team-a/web: not deleted`,
          ),
      );
    }, 'a NotDeleted Warning Event about team-b/web');
    const kept = await entry('web');
    assert.equal(
      kept?.metadata.annotations?.[OWNER],
      'Project.projects.test.kubebus.dev team-a/web',
    );

    // an admin's: neither adopted nor deleted
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'legacy', namespace: REGISTRY },
      data: { project: 'by hand' },
    });
    await project('team-b', 'old', 'legacy');
    const adopted = await env.waitForCondition(Project, 'old', refused, { namespace: 'team-b' });
    assert.match(
      adopted.message ?? '',
      new RegExp(
        `^ConfigMap ${REGISTRY}/legacy exists and was not made by the operator projects: not adopted`,
      ),
    );
    await env.delete(Project, 'old', 'team-b');
    await gone('team-b', 'old');
    const legacy = await entry('legacy');
    assert.deepEqual(
      legacy?.data,
      { project: 'by hand' },
      'the admin’s ConfigMap deleted or changed',
    );
    assert.equal(legacy?.metadata.annotations?.[OWNER], undefined);

    // its own Project's finalize deletes it
    await env.delete(Project, 'web', 'team-a');
    await gone('team-a', 'web');
    assert.equal(await entry('web'), undefined);
  });
});
