// `ctx` under `kubebus replay`: reads are the bus' as of the replayed
// revision, writes dry runs against today's apiserver. A createOnce of what
// did not exist then but does today answers as that reconcile was answered.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kinds } from '@kubebus/shared/definition';
import { KubeApiError, type KubeClient } from '@kubebus/shared/kube';
import { siteContext } from './site-context.test-support.js';

/** Today's apiserver: the object was made since, so a create is refused with 409. */
const madeBy = (ownerReferences: readonly Record<string, unknown>[]) =>
  ({
    request: () =>
      Promise.reject(new KubeApiError(409, 'AlreadyExists', 'configmaps "c" already exists')),
    // what a live createOnce then reads: whose it is
    getIfExists: () =>
      Promise.resolve({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'c',
          namespace: 'default',
          uid: 'c1',
          resourceVersion: '1',
          ownerReferences,
        },
      }),
  }) as unknown as KubeClient;
const madeSince = madeBy([]);

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

  it("refuses live what the bus has no record of and another object controls, rather than answer 'exists'", async () => {
    const other = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'd',
      uid: 'd1',
      controller: true,
    };
    await assert.rejects(
      siteContext(madeBy([other]), signal, { dryRun: false }).createOnce(kinds.ConfigMap, {
        metadata: { name: 'c' },
        data: {},
      }),
      /ConfigMap ns\/c is already controlled by Deployment d \(uid d1\)/,
    );
  });
});
