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
  const [podMonitor, rule] = monitoringOf(site, ROLES, settings) as {
    kind: string;
    metadata: { labels: Record<string, string> };
    spec: { groups?: { rules: Rule[] }[]; podMetricsEndpoints?: { port: string; path: string }[] };
  }[];

  it("carries the label kube-prometheus-stack's Prometheus selects on", () => {
    assert.equal(podMonitor?.kind, 'PodMonitor');
    assert.equal(rule?.kind, 'PrometheusRule');
    for (const object of [podMonitor, rule])
      assert.equal(object?.metadata.labels['release'], 'kube-prometheus-stack');
    assert.deepEqual(podMonitor?.spec.podMetricsEndpoints, [
      { port: 'health', path: '/metrics', interval: '30s' },
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
