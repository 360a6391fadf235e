import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { networkPoliciesOf } from './network-policies.js';
import { selectorLabels } from './names.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

interface Policy {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: {
      from: { namespaceSelector: { matchLabels: Record<string, string> } }[];
      ports: { port: number }[];
    }[];
    egress: { ports: { protocol: string; port: number }[] }[];
  };
}

describe('networkPoliciesOf', () => {
  const settings = plainSettings({
    namespace: 'ops',
    image: 'i',
    module: 'm',
    watchNamespaces: [],
  });
  const [policy] = networkPoliciesOf(site, settings) as Policy[];

  it("selects every role's pods and denies all ingress but the metrics port from monitoring", () => {
    for (const role of ['watcher', 'reconciler', 'status-writer'] as const) {
      const labels = selectorLabels(site, role);
      for (const [key, value] of Object.entries(policy?.spec.podSelector.matchLabels ?? {}))
        assert.equal(labels[key], value, role);
    }
    assert.deepEqual(policy?.spec.policyTypes, ['Ingress', 'Egress']);
    assert.equal(policy?.spec.ingress.length, 1);
    assert.deepEqual(policy?.spec.ingress[0]?.ports, [{ protocol: 'TCP', port: 8443 }]);
    assert.equal(
      policy?.spec.ingress[0]?.from[0]?.namespaceSelector.matchLabels[
        'kubernetes.io/metadata.name'
      ],
      'monitoring',
    );
  });

  it('lets out DNS, the apiserver and NATS only', () => {
    const ports = policy?.spec.egress.flatMap((rule) =>
      rule.ports.map((p) => `${p.protocol}/${p.port}`),
    );
    assert.deepEqual(ports?.sort(), ['TCP/4222', 'TCP/443', 'TCP/53', 'TCP/6443', 'UDP/53']);
  });
});
