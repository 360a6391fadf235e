// What an upgrade leaves behind, on the test kit's real servers: objects
// that carry the finalizer of a version with `finalize` are let go when a
// version without it is running (not left terminating for good), also when
// that finalizer was set under another field manager.
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
  spec: z.object({}),
  status: z.object({ build: z.string() }).partial(),
});

const FINALIZER = 'test.kubebus.dev/widgets';

const withCleanup = defineOperator({
  name: 'widgets',
  for: Widget,
  owns: [kinds.ConfigMap],
  async reconcile(widget, ctx) {
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: `widget-${widget.metadata.name}` },
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

describe('an upgrade that drops finalize', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Widget);
  });
  after(() => env?.stop());

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

  it('lets it go also when the finalizer was set under another field manager', async () => {
    const first = await env.run(withCleanup);
    await env.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Widget',
      metadata: { name: 'renamed', namespace: 'default' },
      spec: {},
    });
    const carried = await env.waitFor(
      Widget,
      'renamed',
      (widget) => (widget?.metadata.finalizers ?? []).includes(FINALIZER),
      { namespace: 'default' },
    );
    await first.stop();
    // the entry belongs to the first field manager: an apply under another one leaves it
    const managers = (carried?.metadata as { managedFields?: { manager: string }[] }).managedFields;
    assert.ok(managers?.some((field) => field.manager === 'kubebus-widgets-finalizer'));

    const second = await env.run(withoutCleanup, {
      env: { KUBEBUS_FIELD_MANAGER: 'kubebus-widgets-renamed' },
    });
    try {
      await env.delete(Widget, 'renamed', 'default');
      await env.waitFor(Widget, 'renamed', (widget) => widget === undefined, {
        namespace: 'default',
        timeoutMs: 90_000,
      });
    } finally {
      await second.stop();
    }
  });
});
