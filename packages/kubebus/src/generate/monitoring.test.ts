import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { ALERT_NAMES, monitoringOf } from './monitoring.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

interface Rule {
  alert: string;
  expr: string;
  labels: { severity: string };
  annotations: Record<string, string>;
}

describe('monitoringOf', () => {
  const settings = plainSettings({
    namespace: 'ops',
    image: 'i',
    module: 'm',
    watchNamespaces: [],
  });
  type Manifest = {
    kind: string;
    type?: string;
    metadata: {
      name: string;
      labels: Record<string, string>;
      annotations?: Record<string, string>;
    };
    roleRef?: { name: string };
    subjects?: { name: string; namespace: string }[];
    spec: { groups?: { rules: Rule[] }[]; podMetricsEndpoints?: object[] };
  };
  const objects = monitoringOf(site, ROLES, settings) as Manifest[];
  const [account, token, binding, podMonitor, rule] = objects;

  it("carries the label kube-prometheus-stack's Prometheus selects on", () => {
    assert.equal(podMonitor?.kind, 'PodMonitor');
    assert.equal(rule?.kind, 'PrometheusRule');
    for (const object of [podMonitor, rule])
      assert.equal(object?.metadata.labels['release'], 'kube-prometheus-stack');
  });

  it('scrapes over HTTPS with the token of an account bound to the metrics-reader role', () => {
    assert.deepEqual(podMonitor?.spec.podMetricsEndpoints, [
      {
        port: 'metrics',
        path: '/metrics',
        interval: '30s',
        scheme: 'https',
        authorization: {
          type: 'Bearer',
          credentials: { name: `kubebus-${site.name}-metrics-scraper-token`, key: 'token' },
        },
        tlsConfig: { insecureSkipVerify: true },
      },
    ]);
    assert.equal(account?.kind, 'ServiceAccount');
    assert.equal(token?.type, 'kubernetes.io/service-account-token');
    assert.equal(
      token?.metadata.annotations?.['kubernetes.io/service-account.name'],
      account?.metadata.name,
    );
    assert.equal(binding?.kind, 'ClusterRoleBinding');
    assert.equal(binding?.roleRef?.name, `kubebus-${site.name}-metrics-reader`);
    assert.deepEqual(binding?.subjects, [
      { kind: 'ServiceAccount', name: account?.metadata.name, namespace: 'ops' },
    ]);
  });

  it('gives every alert a severity, a summary and a runbook in docs/deploy.md', () => {
    const rules = rule?.spec.groups?.flatMap((group) => group.rules) ?? [];
    assert.deepEqual(
      rules.map((r) => r.alert),
      ALERT_NAMES,
    );
    for (const r of rules) {
      assert.ok(r.labels.severity);
      assert.ok(r.annotations['summary'] && r.annotations['description']);
      assert.match(r.annotations['runbook_url'] ?? '', /\/docs\/deploy\.md#kubebus[a-z]+$/);
      // scoped to the operator's namespace: another installation alerts on its own
      assert.match(r.expr, /namespace="ops"/);
    }
  });
});
