// /metrics' certificate in the kustomize base: cert-manager issues it from
// NATS' CA Issuer for the name the PodMonitor verifies, every role mounts it
// where KUBEBUS_METRICS_CERT and KUBEBUS_METRICS_KEY point, and the PodMonitor
// verifies it against the Secret's CA instead of skipping verification.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ROLES } from '../host/role-configs.js';
import { kustomizeFiles } from './kustomize.js';
import { monitoringOf } from './monitoring.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

interface Doc {
  kind: string;
  metadata: { name: string };
  spec: {
    secretName?: string;
    dnsNames?: string[];
    usages?: string[];
    issuerRef?: object;
    podMetricsEndpoints?: { tlsConfig: Record<string, unknown> }[];
    template?: {
      spec: {
        containers: {
          env: { name: string; value?: string }[];
          volumeMounts: { name: string; mountPath: string }[];
        }[];
        volumes: { name: string; secret?: { secretName: string; items: { key: string }[] } }[];
      };
    };
  };
}

const plain = plainSettings({
  namespace: 'ops',
  image: 'i:1',
  module: 'm.js',
  watchNamespaces: [],
});
const files = kustomizeFiles(site, ROLES, plain);
const docs = (path: string) =>
  parseAllDocuments(files[path] ?? '').map((doc) => doc.toJSON() as Doc);
const SECRET = `kubebus-${site.name}-metrics-tls`;
const SERVER_NAME = `kubebus-${site.name}-metrics.ops.svc`;

describe("the kustomize base's /metrics certificate", () => {
  const certificates = docs('cert-manager/certificates.yaml');
  const metrics = certificates.find((d) => d.kind === 'Certificate' && d.metadata.name === SECRET);

  it('is issued by the Issuer that signs NATS, for the name the PodMonitor verifies', () => {
    const nats = certificates.find(
      (d) => d.kind === 'Certificate' && d.metadata.name === 'nats-tls',
    );
    assert.ok(metrics && nats);
    assert.equal(metrics.spec.secretName, SECRET);
    assert.deepEqual(metrics.spec.issuerRef, nats.spec.issuerRef);
    assert.ok(metrics.spec.usages?.includes('server auth'));
    const [podMonitor] = docs('monitoring/monitoring.yaml').filter((d) => d.kind === 'PodMonitor');
    const tlsConfig = podMonitor?.spec.podMetricsEndpoints?.[0]?.tlsConfig;
    assert.deepEqual(tlsConfig, {
      ca: { secret: { name: SECRET, key: 'ca.crt' } },
      serverName: SERVER_NAME,
    });
    assert.ok(metrics.spec.dnsNames?.includes(SERVER_NAME));
  });

  it('is mounted by every role where KUBEBUS_METRICS_CERT and KUBEBUS_METRICS_KEY point', () => {
    const deployments = docs('deployments.yaml').filter((d) => d.kind === 'Deployment');
    assert.equal(deployments.length, ROLES.length);
    for (const deployment of deployments) {
      const pod = deployment.spec.template?.spec;
      const container = pod?.containers[0];
      const env = new Map(container?.env.map((e) => [e.name, e.value]));
      const volume = pod?.volumes.find((v) => v.secret?.secretName === SECRET);
      assert.ok(volume, deployment.metadata.name);
      // the key pair only: ca.crt is the scraper's
      assert.deepEqual(
        volume.secret?.items.map((item) => item.key),
        ['tls.crt', 'tls.key'],
      );
      const dir = container?.volumeMounts.find((m) => m.name === volume.name)?.mountPath;
      assert.equal(env.get('KUBEBUS_METRICS_CERT'), `${dir ?? '?'}/tls.crt`);
      assert.equal(env.get('KUBEBUS_METRICS_KEY'), `${dir ?? '?'}/tls.key`);
    }
  });

  it('without the Secret setting, the PodMonitor still skips verification of a self-signed one', () => {
    const [, , , podMonitor] = monitoringOf(site, ROLES, plain) as Doc[];
    assert.deepEqual(podMonitor?.spec.podMetricsEndpoints?.[0]?.tlsConfig, {
      insecureSkipVerify: true,
    });
  });
});
