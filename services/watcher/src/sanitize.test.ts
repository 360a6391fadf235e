import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@kubebus/shared/events';
import { sanitize } from './sanitize.js';

const SECRETS = { group: '', version: 'v1', resource: 'secrets', namespaced: true };
const CONFIG_MAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

const secret = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: 'creds',
    namespace: 'shop',
    uid: 'u',
    resourceVersion: '7',
    managedFields: [{ manager: 'kubectl' }],
    ...(annotations === undefined ? {} : { annotations }),
  },
  data: { password: 'aHVudGVyMg==' },
  stringData: { token: 't' },
});

describe('what leaves the watcher of an object', () => {
  it('is a Secret without its values, its last-applied copy of them or managedFields', () => {
    const applied = 'kubectl.kubernetes.io/last-applied-configuration';
    const out = sanitize(
      SECRETS,
      secret({ [applied]: '{"data":{"password":"aHVudGVyMg=="}}', team: 'a' }),
    );
    assert.equal(JSON.stringify(out).includes('aHVudGVyMg'), false);
    assert.deepEqual(out.metadata.annotations, { team: 'a' });
    assert.equal('managedFields' in out.metadata, false);
    assert.equal('stringData' in out, false);
  });

  it('leaves no empty annotations where the last-applied one was all there was (no false change)', () => {
    const applied = 'kubectl.kubernetes.io/last-applied-configuration';
    const out = sanitize(SECRETS, secret({ [applied]: '{}' }));
    assert.equal('annotations' in out.metadata, false);
    assert.equal('annotations' in sanitize(SECRETS, secret()).metadata, false);
  });

  it('keeps another kind whole but for managedFields', () => {
    const map = { ...secret(), kind: 'ConfigMap' } as KubeObject;
    const out = sanitize(CONFIG_MAPS, map);
    assert.deepEqual((out as unknown as { data: unknown }).data, { password: 'aHVudGVyMg==' });
    assert.equal('managedFields' in out.metadata, false);
  });
});
