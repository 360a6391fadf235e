import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import operator from './operator.js';
import { DatabaseClusterSpecSchema } from './spec.js';

const spec = DatabaseClusterSpecSchema.parse({
  engine: 'postgres',
  version: '16',
  storage: { size: '1Gi' },
});
const cluster = {
  apiVersion: 'example.kubebus.dev/v1alpha1',
  kind: 'DatabaseCluster',
  metadata: { name: 'db', namespace: 'shop', uid: 'u1', resourceVersion: '1', generation: 1 },
  spec,
};

interface Body {
  readonly kind: string;
}

/** A context whose writes are recorded; the Secret's annotation lands when `markLands` is called. */
function recordingContext(failing: string) {
  const writes: string[] = [];
  let markLands = () => {};
  const markLanded = new Promise<void>((resolve) => {
    markLands = resolve;
  });
  const ctx = {
    dryRun: false,
    deps: { buckets: { ensure: () => Promise.resolve('exists') } },
    log: { info: () => {} },
    event: (_type: string, reason: string) => {
      writes.push(`event ${reason}`);
      return Promise.resolve();
    },
    createOnce: () => Promise.resolve('created'),
    get: () => Promise.resolve(undefined),
    apply: async (body: Body) => {
      if (body.kind === failing) throw new Error(`the apiserver refused the ${failing}`);
      if (body.kind === 'Secret') {
        await markLanded;
        writes.push('mark');
      }
      return body;
    },
  };
  return { ctx, writes, markLands };
}

describe('the DatabaseCluster reconcile', () => {
  it('does not end on a failed apply while the credentials announcement is under way', async () => {
    const { ctx, writes, markLands } = recordingContext('StatefulSet');
    let ended = false;
    const reconcile = operator.reconcile(cluster, ctx as never).finally(() => {
      ended = true;
    });
    // every write has started and the StatefulSet's has failed by the next turn
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ended, false, 'the reconcile waits for the announcement to land');
    markLands();
    await assert.rejects(reconcile, /refused the StatefulSet/);
    assert.deepEqual(writes.sort(), ['event CredentialsCreated', 'mark']);
  });
});
