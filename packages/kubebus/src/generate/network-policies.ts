// NetworkPolicies for the operator's pods (the roles and the topology Job):
// no ingress but the metrics port from Prometheus in the monitoring namespace
// (the kubelet's probes come from the node, which NetworkPolicies let through); egress only to DNS, the apiserver and NATS. The apiserver's
// endpoints are host addresses no pod selector can name, so its ports are
// allowed to any address; NATS may run outside the namespace, likewise.
import type { Operator } from '@kubebus/shared/definition';
import { isVersioned, WEBHOOK_PORT } from './conversion-webhook.js';
import { splice } from './helm-template.js';
import { operatorLabels } from './names.js';
import type { PackageSettings } from './settings.js';

/** Where Prometheus runs: kube-prometheus-stack's pods in its namespace. */
export interface MetricsSource {
  readonly namespace: string;
  /** pod labels, or a Helm block expression */
  readonly podLabels: Readonly<Record<string, string>> | string;
}

export const KUBE_PROMETHEUS_STACK: MetricsSource = {
  namespace: 'monitoring',
  podLabels: { 'app.kubernetes.io/name': 'prometheus' },
};

/** The selector of every pod of the operator. */
export function operatorPodSelector(operator: Operator): Record<string, string> {
  return { 'app.kubernetes.io/name': 'kubebus', 'app.kubernetes.io/instance': operator.name };
}

const tcp = (port: number) => ({ protocol: 'TCP', port });

export function networkPoliciesOf(
  operator: Operator,
  settings: PackageSettings,
  metrics: MetricsSource = KUBE_PROMETHEUS_STACK,
  natsPort = 4222,
): object[] {
  const metadata = (name: string) => ({
    name,
    namespace: settings.namespace,
    labels: { ...operatorLabels(operator), ...settings.extraLabels },
  });
  const podSelector = { matchLabels: operatorPodSelector(operator) };
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: metadata(`kubebus-${operator.name}`),
      spec: {
        podSelector,
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [
              {
                namespaceSelector: {
                  matchLabels: { 'kubernetes.io/metadata.name': metrics.namespace },
                },
                podSelector: { matchLabels: metrics.podLabels },
              },
            ],
            ports: [tcp(settings.metricsPort)],
          },
          // the conversion webhook: the apiserver calls from host addresses no selector can name
          ...(isVersioned(operator) ? [{ ports: [tcp(WEBHOOK_PORT)] }] : []),
        ],
        egress: [
          // DNS, wherever the cluster resolves (kube-dns or a node-local cache)
          { ports: [{ protocol: 'UDP', port: 53 }, tcp(53)] },
          // the apiserver: the kubernetes Service's port and the usual endpoint port
          { ports: [tcp(443), tcp(6443)] },
          { ports: [tcp(natsPort)] },
          // the chart's networkPolicy.extraEgress: what the operator's outside calls need
          ...(settings.extraEgress === undefined ? [] : [splice(settings.extraEgress)]),
        ],
      },
    },
  ];
}
