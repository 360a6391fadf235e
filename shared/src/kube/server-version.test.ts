import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubernetesVersion, supportedKubernetes } from './server-version.js';

describe('Kubernetes version floor', () => {
  it('reads /version answers, managed clusters\' "29+" included', () => {
    assert.deepEqual(kubernetesVersion({ major: '1', minor: '37' }), { major: 1, minor: 37 });
    assert.deepEqual(kubernetesVersion({ major: '1', minor: '29+' }), { major: 1, minor: 29 });
    assert.deepEqual(kubernetesVersion({ gitVersion: 'v1.31.4-eks-2d5f260' }), {
      major: 1,
      minor: 31,
    });
    assert.equal(kubernetesVersion({}), undefined);
  });

  it('accepts 1.30 and later, refuses earlier', () => {
    assert.equal(supportedKubernetes({ major: 1, minor: 30 }), true);
    assert.equal(supportedKubernetes({ major: 1, minor: 37 }), true);
    assert.equal(supportedKubernetes({ major: 2, minor: 0 }), true);
    assert.equal(supportedKubernetes({ major: 1, minor: 29 }), false);
  });
});
