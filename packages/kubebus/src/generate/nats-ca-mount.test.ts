// The roles and the topology Job verify the NATS servers with the CA of the
// servers' TLS Secret, and must never receive the servers' private key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { deploymentsOf } from './deployments.js';
import { NATS_CA_DIR } from './nats-env.js';
import { DEFAULT_NATS_TLS_SECRET, plainSettings } from './settings.js';
import { site } from './test-operators.js';
import { topologyJobOf } from './topology-job.js';

interface PodSpec {
  containers: {
    env: { name: string; value?: string }[];
    volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  }[];
  volumes?: { name: string; secret?: { secretName: string; items?: unknown } }[];
}
type WithPod = { metadata: { name: string }; spec: { template: { spec: PodSpec } } };

const settings = plainSettings({
  namespace: 'ops',
  image: 'example/site:1',
  module: 'dist/site.js',
  watchNamespaces: [],
});

const pods = (): [string, PodSpec][] => [
  ...(deploymentsOf(site, ROLES, settings) as WithPod[]).map(
    (d) => [d.metadata.name, d.spec.template.spec] as [string, PodSpec],
  ),
  ['topology job', (topologyJobOf(site, settings) as WithPod).spec.template.spec],
];

describe('the NATS CA in generated pods', () => {
  it('mounts only ca.crt of the TLS Secret, read-only, and points KUBEBUS_NATS_CA at it', () => {
    assert.equal(pods().length, ROLES.length + 1);
    for (const [name, pod] of pods()) {
      const secrets = (pod.volumes ?? []).filter(
        (v) => v.secret?.secretName === DEFAULT_NATS_TLS_SECRET,
      );
      assert.deepEqual(
        secrets,
        [
          {
            name: 'nats-ca',
            secret: {
              secretName: DEFAULT_NATS_TLS_SECRET,
              items: [{ key: 'ca.crt', path: 'ca.crt' }],
            },
          },
        ],
        name,
      );
      const container = pod.containers[0];
      assert.ok(container, name);
      assert.deepEqual(
        container.volumeMounts?.filter((m) => m.name === 'nats-ca'),
        [{ name: 'nats-ca', mountPath: NATS_CA_DIR, readOnly: true }],
        name,
      );
      assert.equal(
        container.env.find((e) => e.name === 'KUBEBUS_NATS_CA')?.value,
        `${NATS_CA_DIR}/ca.crt`,
        name,
      );
      assert.match(
        container.env.find((e) => e.name === 'KUBEBUS_NATS_URL')?.value ?? '',
        /^tls:\/\//,
        name,
      );
    }
  });

  it('mounts nothing and sets no CA when the package has no TLS Secret', () => {
    const { natsTlsSecret: _dropped, ...plain } = settings;
    const deployment = deploymentsOf(site, ['watcher'], plain)[0] as WithPod;
    const pod = deployment.spec.template.spec;
    assert.equal(
      pod.volumes?.some((v) => v.name === 'nats-ca'),
      false,
    );
    assert.equal(
      pod.containers[0]?.env.some((e) => e.name === 'KUBEBUS_NATS_CA'),
      false,
    );
  });
});
