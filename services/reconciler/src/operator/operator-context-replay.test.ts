// `ctx` under `kubebus replay`: reads are the bus' as of the replayed
// revision, writes dry runs against today's apiserver. A createOnce of what
// did not exist then but does today answers as that reconcile was answered.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kinds } from '@kubebus/shared/definition';
import { KubeApiError, type KubeClient } from '@kubebus/shared/kube';
import { siteContext } from './site-context.test-support.js';

/** Today's apiserver: the object was made since, so a create is refused with 409. */
const madeSince = {
  request: () =>
    Promise.reject(new KubeApiError(409, 'AlreadyExists', 'configmaps "c" already exists')),
} as unknown as KubeClient;

describe('createOnce under replay', () => {
  const signal = new AbortController().signal;
  const once = (dryRun: boolean) =>
    siteContext(madeSince, signal, { dryRun }).createOnce(kinds.ConfigMap, {
      metadata: { name: 'c' },
      data: {},
    });

  it('answers created for what the replayed revision had not yet, though it exists today', async () => {
    assert.equal(await once(true), 'created');
  });

  it('answers exists live', async () => {
    assert.equal(await once(false), 'exists');
  });
});
