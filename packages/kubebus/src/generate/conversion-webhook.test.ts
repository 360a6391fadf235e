import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { defineOperator } from '@kubebus/shared/definition';
import { ROLES } from '../host/role-configs.js';
import { Thermostat } from '../testing/thermostat-fixture.js';
import { helmChartFiles } from './helm-chart.js';
import { crdFileName, kustomizeFiles } from './kustomize.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

const thermostats = defineOperator({
  name: 'thermostats',
  for: Thermostat,
  reconcile: async () => undefined,
});
const settings = plainSettings({
  namespace: 'ops',
  image: 'i:1',
  module: 'm.js',
  watchNamespaces: [],
});

type Doc = {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
};
const docs = (text: string | undefined) =>
  parseAllDocuments(text ?? '').map((doc) => doc.toJS() as Doc);

describe('the generated conversion webhook', () => {
  const files = kustomizeFiles(thermostats, ROLES, settings);

  it('fronts the reconcilers with a Service the CRD calls, its CA injected by cert-manager', () => {
    const [crd] = docs(files[crdFileName(thermostats)]);
    const webhook = (crd?.spec['conversion'] as { webhook: { clientConfig: unknown } }).webhook;
    assert.deepEqual(webhook.clientConfig, {
      service: { namespace: 'ops', name: 'thermostats-conversion', path: '/convert', port: 443 },
    });
    assert.equal(
      crd?.metadata.annotations?.['cert-manager.io/inject-ca-from'],
      'ops/thermostats-conversion',
    );
    const objects = docs(files['conversion-webhook.yaml']);
    const service = objects.find((o) => o.kind === 'Service');
    assert.deepEqual(service?.spec['selector'], {
      'app.kubernetes.io/name': 'kubebus',
      'app.kubernetes.io/instance': 'thermostats',
      'app.kubernetes.io/component': 'reconciler',
    });
    const certificate = objects.find(
      (o) => o.kind === 'Certificate' && o.metadata.name === 'thermostats-conversion',
    );
    assert.ok(certificate !== undefined);
    // a CA chain: the serving certificate is signed by a CA Issuer, whose CA the self-signed one made
    const issuerOf = (doc: Doc | undefined) =>
      (doc?.spec['issuerRef'] as { name: string } | undefined)?.name;
    assert.equal(issuerOf(certificate), 'thermostats-conversion-ca');
    const caIssuer = objects.find(
      (o) => o.kind === 'Issuer' && o.metadata.name === 'thermostats-conversion-ca',
    );
    assert.deepEqual(caIssuer?.spec, { ca: { secretName: 'thermostats-conversion-ca' } });
    const ca = objects.find(
      (o) => o.kind === 'Certificate' && o.metadata.name === 'thermostats-conversion-ca',
    );
    assert.equal(ca?.spec['isCA'], true);
    assert.equal(issuerOf(ca), 'thermostats-conversion-selfsigned');
    assert.deepEqual(
      (certificate?.spec['dnsNames'] as string[])[0],
      'thermostats-conversion.ops.svc',
    );
    const listed = parse(files['kustomization.yaml'] ?? '') as { resources: string[] };
    assert.ok(listed.resources.includes('conversion-webhook.yaml'));
  });

  it("mounts the certificate into the reconciler and names it in the webhook's variables", () => {
    const text = JSON.stringify(
      docs(files['deployments.yaml']).find((d) => d.metadata.name.endsWith('-reconciler')),
    );
    for (const needed of [
      'KUBEBUS_WEBHOOK_CERT',
      'KUBEBUS_WEBHOOK_KEY',
      'thermostats-conversion-tls',
      '"containerPort":9443',
    ])
      assert.ok(text.includes(needed), needed);
    const watcher = JSON.stringify(
      docs(files['deployments.yaml']).find((d) => d.metadata.name.endsWith('-watcher')),
    );
    assert.ok(!watcher.includes('KUBEBUS_WEBHOOK'));
    assert.ok(files['network-policies.yaml']?.includes('port: 9443'));
  });

  it('is in the Helm chart too, the CRD kept and its CA injected', () => {
    const chart = helmChartFiles(thermostats, ROLES, {
      image: 'i:1',
      module: 'm.js',
      watchNamespaces: [],
    });
    assert.match(chart['templates/conversion-webhook.yaml'] ?? '', /kind: Certificate/);
    const crd = chart['templates/crd.yaml'] ?? '';
    assert.match(crd, /cert-manager\.io\/inject-ca-from: .*\/thermostats-conversion/);
    assert.match(crd, /helm\.sh\/resource-policy: keep/);
    assert.match(chart['templates/deployments.yaml'] ?? '', /KUBEBUS_WEBHOOK_CERT/);
  });

  it('adds nothing for a resource in one version', () => {
    const single = kustomizeFiles(site, ROLES, settings);
    assert.equal(single['conversion-webhook.yaml'], undefined);
    assert.ok(!JSON.stringify(single).includes('KUBEBUS_WEBHOOK'));
    assert.ok(!JSON.stringify(single).includes('9443'));
  });
});
