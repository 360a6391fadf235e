// A primary lists in its status the children whose controller owner reference
// names it. A child moved to another primary leaves the first one's status and
// joins the second's; orphaned, it leaves the second's: the watcher marks the
// owner the child's previous state named as well as its new one, as
// controller-runtime's EnqueueRequestForOwner maps the old and the new object
// of an update.
import { KubeClient, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { untilQuiet, waitFor } from '../support/wait.js';

const Shelf = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Shelf',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({ children: z.array(z.string()) }).partial(),
});

/** Reconciles per Shelf: a quiet one no longer has one under way that would list again. */
const reconciles = new Map<string, number>();

const shelves = defineOperator({
  name: 'shelves',
  for: Shelf,
  owns: [kinds.ConfigMap],
  async reconcile(shelf, ctx) {
    const { name, uid } = shelf.metadata;
    reconciles.set(name, (reconciles.get(name) ?? 0) + 1);
    const children = (await ctx.list(kinds.ConfigMap)).filter((configMap) =>
      configMap.metadata.ownerReferences?.some((ref) => ref.controller === true && ref.uid === uid),
    );
    return { status: { children: children.map((child) => child.metadata.name).sort() } };
  },
});

describe('an owned object and the owner it leaves', { timeout: 300_000 }, () => {
  let env: TestEnvironment;
  let kube: KubeClient;

  before(async () => {
    env = await startTestEnvironment();
    kube = new KubeClient(
      await loadKubeConfig(env.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
    await env.install(Shelf);
    await env.run(shelves);
  });
  after(async () => {
    kube?.close();
    await env?.stop();
  });

  const shelf = (name: string) =>
    env.apply({ apiVersion: 'test.kubebus.dev/v1', kind: 'Shelf', metadata: { name }, spec: {} });
  const controllerRef = (owner: { metadata: { name: string; uid: string } }) => ({
    apiVersion: 'test.kubebus.dev/v1',
    kind: 'Shelf',
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
  });
  /** As `kubectl patch --type=merge` would: the child's owner references replaced, or removed (null). */
  const reown = (ownerReferences: object[] | null) =>
    kube.request('/api/v1/namespaces/default/configmaps/book', {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { ownerReferences } },
    });
  const childrenOf = async (name: string) => (await env.get(Shelf, name))?.status?.children;
  const showing = (name: string, children: string[]) =>
    waitFor(
      async () => {
        assert.deepEqual(await childrenOf(name), children);
        return true;
      },
      `${name}'s status to list [${children.join(', ')}]`,
      30_000,
    );
  /** No reconcile of these for a while: what each lists next, only a mark makes it. */
  const quiet = (...names: string[]) =>
    untilQuiet(
      () => names.map((name) => reconciles.get(name) ?? 0).join(','),
      `${names.join(', ')} to stop reconciling`,
      2_000,
      30_000,
    );

  it('reconciles the owner a child is moved away from, and the last owner of an orphan', async () => {
    const a = await shelf('a');
    const b = await shelf('b');
    // someone else's child, pointed at a: kubebus' owned-kind watch sees it by its label
    await env.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'book',
        labels: { 'app.kubernetes.io/managed-by': 'kubebus' },
        ownerReferences: [controllerRef(a)],
      },
      data: {},
    });
    await showing('a', ['book']);
    await showing('b', []);
    await quiet('a', 'b');

    await reown([controllerRef(b)]);
    await showing('b', ['book']);
    await showing('a', []);
    await quiet('a', 'b');

    await reown(null);
    await showing('b', []);
    assert.deepEqual(await childrenOf('a'), []);
  });
});
