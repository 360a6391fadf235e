import type { KubeObject } from '@kubebus/shared/events';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WrittenStatus } from './written-status.js';

const key = {
  group: 'example.kubebus.dev',
  resource: 'databaseclusters',
  namespace: 'ns',
  name: 'db',
};
const object = (resourceVersion: string, status: Record<string, unknown>): KubeObject => ({
  apiVersion: 'example.kubebus.dev/v1alpha1',
  kind: 'DatabaseCluster',
  metadata: { name: 'db', namespace: 'ns', uid: 'u1', resourceVersion, generation: 1 },
  status,
});

describe('the status the writer wrote last', () => {
  it('stands in for the bus while the bus still shows the revision the patch was judged against', () => {
    const written = new WrittenStatus();
    written.remember(key, object('11', { phase: 'Provisioning' }), '10');
    assert.deepEqual(written.current(key, object('10', {})).status, { phase: 'Provisioning' });
  });

  it('gives way to any other revision the bus records: the patch itself, or a change made after it', () => {
    const written = new WrittenStatus();
    written.remember(key, object('11', { phase: 'Provisioning' }), '10');
    assert.deepEqual(written.current(key, object('11', { phase: 'Provisioning' })).status, {
      phase: 'Provisioning',
    });
    // someone else wrote the status: the writer judges against that, and repairs it
    assert.deepEqual(written.current(key, object('12', { phase: 'Failed' })).status, {
      phase: 'Failed',
    });
  });

  it('stands in for an older own revision too: a status flipped back is still patched', () => {
    const written = new WrittenStatus();
    // X judged against 10 (answered 11), then Y judged against the same view (answered 12)
    written.remember(key, object('11', { phase: 'X' }), '10');
    written.remember(key, object('12', { phase: 'Y' }), '10');
    // the bus catches up only to 11: the writer's view is Y, so intent X is not a no-op
    assert.deepEqual(written.current(key, object('11', { phase: 'X' })).status, { phase: 'Y' });
    assert.deepEqual(written.current(key, object('10', {})).status, { phase: 'Y' });
    // a revision of someone else's is the bus' word
    assert.deepEqual(written.current(key, object('13', { phase: 'Z' })).status, { phase: 'Z' });
  });
});
