// The DatabaseCluster CRD under deploy/ is generated from the zod schema: the
// committed file must match the generator, and a real apiserver must accept it
// and enforce what it carries.
import { CustomObjectsApi } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CRD_FILE, renderCrd } from '../../deploy/scripts/generate-crd.js';
import { TestBed } from '../bed/testbed.js';
import { installDatabaseClusterCrd } from '../support/pipeline.js';

describe('DatabaseCluster CRD', { timeout: 120_000 }, () => {
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start();
  });
  after(async () => {
    await bed.stop();
  });

  it('is committed as generated (run `npm run generate:crd` after changing the schema)', () => {
    assert.equal(readFileSync(CRD_FILE, 'utf8'), renderCrd());
  });

  it('is accepted by the apiserver, which defaults and validates the spec', async () => {
    await installDatabaseClusterCrd(bed);
    const api = bed.kubeConfig().makeApiClient(CustomObjectsApi);
    const body = (spec: Record<string, unknown>) => ({
      apiVersion: 'example.kubebus.dev/v1alpha1',
      kind: 'DatabaseCluster',
      metadata: { name: `c${Math.random().toString(16).slice(2, 8)}` },
      spec,
    });
    const target = {
      group: 'example.kubebus.dev',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'databaseclusters',
    };
    const created = (await api.createNamespacedCustomObject({
      ...target,
      body: body({ engine: 'postgres', version: '16', storage: { size: '5Gi' } }),
    })) as { spec: { replicas: number } };
    assert.equal(created.spec.replicas, 3, 'the schema default applies');

    const invalid: [Record<string, unknown>, RegExp][] = [
      [{ engine: 'oracle', version: '1', storage: { size: '1Gi' } }, /spec\.engine/],
      [
        { engine: 'postgres', version: '16', replicas: 12, storage: { size: '1Gi' } },
        /spec\.replicas/,
      ],
      [{ engine: 'postgres', version: '16', storage: { size: 'lots' } }, /spec\.storage\.size/],
    ];
    for (const [spec, field] of invalid) {
      await assert.rejects(
        api.createNamespacedCustomObject({ ...target, body: body(spec) }),
        (error: { code?: number; body?: string }) =>
          error.code === 422 && field.test(String(error.body)),
      );
    }
  });
});
