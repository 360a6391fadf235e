// What Kubernetes' owner references allow, and what an upgrade leaves
// behind, on the test kit's real servers: a namespaced object cannot own one
// in another namespace (the apply is a TerminalError on the object, nothing
// written), and objects that carry the finalizer of a version with
// `finalize` are let go when a version without it is running (not left
// terminating for good).
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';

const Widget = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Widget',
  scope: 'Namespaced',
  // where its ConfigMap goes: its own namespace unless given
  spec: z.object({ into: z.string().optional() }),
  status: z.object({ build: z.string() }).partial(),
});

const FINALIZER = 'test.kubebus.dev/widgets';

const withCleanup = defineOperator({
  name: 'widgets',
  for: Widget,
  owns: [kinds.ConfigMap],
  async reconcile(widget, ctx) {
    await ctx.apply(kinds.ConfigMap, {
      metadata: {
        name: `widget-${widget.metadata.name}`,
        ...(widget.spec.into === undefined ? {} : { namespace: widget.spec.into }),
      },
      data: { build: 'one' },
    });
    return { status: { build: 'one' } };
  },
  async finalize() {
    await Promise.resolve();
  },
});

/** The next version: the same, its cleanup gone. */
const withoutCleanup = defineOperator({
  name: 'widgets',
  for: Widget,
  owns: [kinds.ConfigMap],
  reconcile: async () => ({ status: { build: 'two' } }),
});

describe('owner references and upgrades', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Widget);
    await env.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
  });
  after(() => env?.stop());

  it('refuses an owned object outside the owner’s namespace as a TerminalError, writing nothing', async () => {
    const running = await env.run(withCleanup);
    try {
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Widget',
        metadata: { name: 'astray', namespace: 'default' },
        spec: { into: 'elsewhere' },
      });
      const failed = await env.waitForCondition(
        Widget,
        'astray',
        { type: 'Ready', status: 'False', reason: 'TerminalError' },
        { namespace: 'default', timeoutMs: 90_000 },
      );
      assert.match(
        failed.message ?? '',
        /ConfigMap elsewhere\/widget-astray is outside default, the namespace of its owner Widget default\/astray; Kubernetes refuses an owner reference across namespaces/,
      );
      assert.equal(await env.get(kinds.ConfigMap, 'widget-astray', 'elsewhere'), undefined);
      // in its own namespace the same operator writes it, owned
      await env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Widget',
        metadata: { name: 'home', namespace: 'default' },
        spec: {},
      });
      await env.waitForCondition(Widget, 'home', { type: 'Ready' }, { namespace: 'default' });
      const owned = await env.get(kinds.ConfigMap, 'widget-home', 'default');
      assert.equal(owned?.metadata.ownerReferences?.[0]?.name, 'home');
    } finally {
      await running.stop();
    }
  });

  it('lets go of an object the version before finalized, when the running one has no finalize', async () => {
    const first = await env.run(withCleanup);
    await env.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Widget',
      metadata: { name: 'kept', namespace: 'default' },
      spec: {},
    });
    await env.waitFor(
      Widget,
      'kept',
      (widget) =>
        widget?.status?.build === 'one' && (widget.metadata.finalizers ?? []).includes(FINALIZER),
      { namespace: 'default' },
    );
    await first.stop();

    const second = await env.run(withoutCleanup);
    try {
      await env.waitFor(Widget, 'kept', (widget) => widget?.status?.build === 'two', {
        namespace: 'default',
      });
      await env.delete(Widget, 'kept', 'default');
      // without the release it stays terminating, its finalizer never taken off
      await env.waitFor(Widget, 'kept', (widget) => widget === undefined, {
        namespace: 'default',
        timeoutMs: 90_000,
      });
    } finally {
      await second.stop();
    }
  });
});
