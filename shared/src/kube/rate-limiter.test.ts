import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PerResourceThrottle, TokenBucket, resourceOfPath } from './rate-limiter.js';

describe('token bucket', () => {
  it('lets a burst through at once, then paces requests at qps', async () => {
    let now = 0;
    const bucket = new TokenBucket(100, 5, () => now);
    for (let i = 0; i < 5; i++) await bucket.take(); // the burst, with no time passing
    let served = false;
    const sixth = bucket.take().then(() => (served = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(served, false, 'the sixth request waits for a token');
    now += 10; // 10 ms at 100 qps refills one token
    await sixth;
    assert.equal(served, true);
  });
});

describe("throttle per resource type (controller-runtime's semantics)", () => {
  it('names the resource of a path; subresources share it', () => {
    assert.equal(resourceOfPath('/api/v1/namespaces/a/configmaps/x'), '/configmaps');
    assert.equal(resourceOfPath('/api/v1/namespaces/a/configmaps'), '/configmaps');
    assert.equal(resourceOfPath('/api/v1/namespaces/a'), '/namespaces');
    assert.equal(
      resourceOfPath('/apis/apps/v1/namespaces/a/statefulsets/x?fieldManager=m'),
      'apps/statefulsets',
    );
    assert.equal(
      resourceOfPath('/apis/example.kubebus.dev/v1alpha1/namespaces/a/databaseclusters/x/status'),
      'example.kubebus.dev/databaseclusters',
    );
    assert.equal(
      resourceOfPath('/apis/rbac.authorization.k8s.io/v1/clusterroles/x'),
      'rbac.authorization.k8s.io/clusterroles',
    );
  });

  it('paces each resource type on its own: one kind at its limit does not hold back another', async () => {
    let now = 0;
    const throttle = new PerResourceThrottle(100, 1, () => now);
    await throttle.take('/api/v1/namespaces/a/configmaps/x');
    let configMapServed = false;
    const second = throttle
      .take('/api/v1/namespaces/a/configmaps/y')
      .then(() => (configMapServed = true));
    // another kind has its own bucket: served at once
    await throttle.take('/apis/apps/v1/namespaces/a/statefulsets/x');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(configMapServed, false, 'the second ConfigMap waits for its own token');
    now += 10;
    await second;
    assert.equal(configMapServed, true);
  });
});
