// The migration's decisions on answers a test bed's apiserver cannot be made
// to give on demand: a continue token that expired (410 with the Status'
// own token) and a CRD that is no longer Established with the storage
// version when storedVersions would be trimmed. The whole command against a
// real apiserver is test/e2e/versioned-resource.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type RequestInit } from '@kubebus/shared/kube';
import { Thermostat } from '../testing/thermostat-fixture.js';
import { migrateStorage, MigrationRefused, type MigrationClient } from './storage-migration.js';

const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/thermostats.test.kubebus.dev';
const LIST = '/apis/test.kubebus.dev/v1/thermostats';

const crd = (established: boolean, storage = 'v1') => ({
  spec: {
    versions: [
      { name: 'v1alpha1', storage: storage === 'v1alpha1' },
      { name: 'v1', storage: storage === 'v1' },
    ],
  },
  status: {
    storedVersions: ['v1alpha1', 'v1'],
    conditions: [{ type: 'Established', status: established ? 'True' : 'False' }],
  },
});

const objects = Array.from({ length: 450 }, (_, i) => ({
  metadata: { name: `t${i}`, namespace: 'home' },
}));

/** An apiserver's answers for the migration: pages of 200, the second token expired. */
function apiserver(crdAtEnd: ReturnType<typeof crd>) {
  const calls = { put: new Set<string>(), patched: undefined as unknown, crdReads: 0 };
  const pages: Record<string, [number, string]> = {
    '': [0, 'c1'],
    'c1-fresh': [200, 'c2'],
    c2: [400, ''],
  };
  const client: MigrationClient = {
    getIfExists: <T>(path: string) => {
      assert.equal(path, CRD);
      calls.crdReads++;
      return Promise.resolve((calls.crdReads === 1 ? crd(true) : crdAtEnd) as T);
    },
    request: <T>(path: string, init?: RequestInit) => {
      if (path === LIST) {
        const token = String(init?.query?.['continue'] ?? '');
        if (token === 'c1')
          return Promise.reject(new KubeApiError(410, 'Expired', 'too old', undefined, 'c1-fresh'));
        const page = pages[token];
        assert.ok(page !== undefined, `continue ${token}`);
        const [from, next] = page;
        return Promise.resolve({
          items: objects.slice(from, from + 200),
          metadata: { continue: next },
        } as T);
      }
      if (init?.method === 'PUT') {
        calls.put.add(path);
        return Promise.resolve({} as T);
      }
      assert.equal(path, `${CRD}/status`);
      calls.patched = init?.body;
      return Promise.resolve({} as T);
    },
  };
  return { client, calls };
}

describe('kubebus storage migrate', () => {
  it('goes on with the token a 410 Expired carries, then trims storedVersions', async () => {
    const { client, calls } = apiserver(crd(true));
    const report = await migrateStorage(client, Thermostat);
    assert.equal(report.rewritten, 450);
    assert.equal(calls.put.size, 450);
    assert.ok(calls.put.has('/apis/test.kubebus.dev/v1/namespaces/home/thermostats/t449'));
    assert.deepEqual(calls.patched, { status: { storedVersions: ['v1'] } });
  });

  it('leaves storedVersions alone unless the CRD is Established with the storage version', async () => {
    for (const after of [crd(false), crd(true, 'v1alpha1')]) {
      const { client, calls } = apiserver(after);
      await assert.rejects(migrateStorage(client, Thermostat), MigrationRefused);
      assert.equal(calls.patched, undefined);
    }
  });
});
