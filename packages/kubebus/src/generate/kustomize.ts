// The kustomize base: every object of the package with plain values, NATS in
// nats/ (a configMapGenerator hashes its configuration, so a change rolls
// the servers), monitoring in monitoring/ — not in the base's resources, as
// it needs the Prometheus Operator's CRDs: an overlay adds it.
import { crdOf } from '../api/crd.js';
import { serviceTarget } from '../api/conversion-target.js';
import { conversionWebhookObjects, isVersioned } from './conversion-webhook.js';
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { deploymentsOf } from './deployments.js';
import { disruptionBudgetsOf } from './disruption-budgets.js';
import { metricsCertificateOf, metricsTlsSecretName } from './metrics-certificate.js';
import { monitoringOf } from './monitoring.js';
import { namespaceOf } from './namespace.js';
import { natsCertificatesOf } from './nats-certificates.js';
import { natsServerConfigOf } from './nats-server.js';
import { natsObjectsOf, natsUsersOfPackage } from './nats-statefulset.js';
import { CLUSTER_FILE, SINGLE_SERVER_CLUSTER } from './nats-tls-config.js';
import { networkPoliciesOf } from './network-policies.js';
import { rbacOf } from './rbac.js';
import { DEFAULT_NATS_TLS_SECRET, type PackageSettings } from './settings.js';
import { topologyJobOf } from './topology-job.js';
import { yamlDocuments } from './yaml-documents.js';

export const GENERATED = (operator: Operator, what: string) =>
  `${what} of operator ${operator.name}, written by \`kubebus generate\`: do not edit,\nregenerate; put changes in an overlay.`;

export function crdFileName(operator: Operator): string {
  return `${operator.for.plural}.${operator.for.group}.yaml`;
}

function kustomization(fields: object, header: string): string {
  const body = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    ...fields,
  };
  return yamlDocuments([body], header).replace(/^---\n/m, '');
}

/** The base's files, by path relative to the base. */
export function kustomizeFiles(
  operator: Operator,
  roles: readonly Role[],
  plain: PackageSettings,
): Record<string, string> {
  // /metrics serves the certificate cert-manager/ issues (or a Secret of that name)
  const settings = {
    ...plain,
    metricsTlsSecret: plain.metricsTlsSecret ?? metricsTlsSecretName(operator),
  };
  const generated = (what: string) => GENERATED(operator, what);
  const crd = crdFileName(operator);
  const users = natsUsersOfPackage(operator, roles);
  return {
    'kustomization.yaml': kustomization(
      {
        resources: [
          'namespace.yaml',
          crd,
          'rbac.yaml',
          'nats',
          'topology-job.yaml',
          'deployments.yaml',
          'pod-disruption-budgets.yaml',
          'network-policies.yaml',
          ...(isVersioned(operator) ? ['conversion-webhook.yaml'] : []),
        ],
      },
      `${generated('The kustomize base')}\n\nThe NATS users' passwords come from the Secret ${settings.natsSecret} (keys:\n${users.join(', ')}): create it, or generate it in an overlay.\nmonitoring/ (a PodMonitor and a PrometheusRule) needs the Prometheus Operator's\nCRDs: add it to an overlay's resources. NATS speaks TLS only, with the Secret\n${settings.natsTlsSecret ?? DEFAULT_NATS_TLS_SECRET}, and /metrics with ${settings.metricsTlsSecret} (the PodMonitor verifies it):\ncert-manager/ issues both (add it to an overlay's resources), or create them.`,
    ),
    'namespace.yaml': yamlDocuments([namespaceOf(settings)], generated('The namespace')),
    [crd]: yamlDocuments(
      [crdOf(operator.for, serviceTarget(operator.for, settings.namespace))],
      generated('The CRD'),
    ),
    ...(isVersioned(operator)
      ? {
          'conversion-webhook.yaml': yamlDocuments(
            conversionWebhookObjects(operator, settings),
            generated(
              "The conversion webhook's Service and certificate (needs cert-manager; without it, create the Secret and set the CRD's caBundle)",
            ),
          ),
        }
      : {}),
    'rbac.yaml': yamlDocuments(
      rbacOf(operator, settings.namespace, roles, settings.watchNamespaces),
      generated('ServiceAccounts and least-privilege RBAC per role'),
    ),
    'topology-job.yaml': yamlDocuments(
      [topologyJobOf(operator, settings)],
      `${generated('The topology step')}\nAfter an upgrade that changes it, delete the Job and apply again (its template is immutable).`,
    ),
    'deployments.yaml': yamlDocuments(
      deploymentsOf(operator, roles, settings),
      generated('The roles, one Deployment each'),
    ),
    'pod-disruption-budgets.yaml': yamlDocuments(
      disruptionBudgetsOf(operator, roles, settings),
      generated('PodDisruptionBudgets'),
    ),
    'network-policies.yaml': yamlDocuments(
      networkPoliciesOf(operator, settings),
      generated('NetworkPolicies'),
    ),
    'nats/kustomization.yaml': kustomization(
      {
        resources: ['nats.yaml'],
        configMapGenerator: [
          {
            name: 'nats-config',
            namespace: settings.namespace,
            files: ['nats-server.conf', CLUSTER_FILE],
          },
        ],
      },
      generated('NATS'),
    ),
    'nats/nats.yaml': yamlDocuments(
      natsObjectsOf(operator, roles, settings),
      generated('NATS with JetStream'),
    ),
    'nats/nats-server.conf': natsServerConfigOf(operator, roles),
    [`nats/${CLUSTER_FILE}`]: SINGLE_SERVER_CLUSTER,
    'cert-manager/kustomization.yaml': kustomization(
      { resources: ['certificates.yaml'] },
      generated('The NATS and /metrics certificates (needs cert-manager)'),
    ),
    'cert-manager/certificates.yaml': yamlDocuments(
      [
        ...natsCertificatesOf(settings, settings.natsTlsSecret ?? DEFAULT_NATS_TLS_SECRET),
        ...metricsCertificateOf(operator, settings),
      ],
      `${generated("The NATS servers' and /metrics' certificates, from cert-manager")}\nWithout cert-manager, create the Secrets ${settings.natsTlsSecret ?? DEFAULT_NATS_TLS_SECRET} and ${settings.metricsTlsSecret} (tls.crt, tls.key, ca.crt) yourself.`,
    ),
    'monitoring/kustomization.yaml': kustomization(
      { resources: ['monitoring.yaml'] },
      generated('Monitoring (needs the Prometheus Operator)'),
    ),
    'monitoring/monitoring.yaml': yamlDocuments(
      monitoringOf(operator, roles, settings),
      generated('A PodMonitor scraping /metrics over HTTPS with its own token, and the alerts'),
    ),
  };
}
