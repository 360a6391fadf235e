// /metrics' serving certificate, verified (ADR 0020): a cert-manager
// Certificate from the Issuer that signs NATS' certificates, for one name the
// scraper checks (`kubebus-<op>-metrics.<ns>.svc`: Prometheus dials pod IPs, so
// the PodMonitor names the server it expects). Every role mounts its tls.crt
// and tls.key where KUBEBUS_METRICS_CERT and KUBEBUS_METRICS_KEY point; the
// PodMonitor verifies against the Secret's ca.crt instead of skipping
// verification. Without the Secret setting, the roles make a self-signed
// certificate in memory and the PodMonitor skips verification, as before.
import type { Operator } from '@kubebus/shared/definition';
import { NATS_CA_SECRET } from './nats-certificates.js';
import { operatorLabels } from './names.js';
import type { PackageSettings } from './settings.js';

/** Where the metrics Secret's tls.crt and tls.key are mounted in every role. */
export const METRICS_TLS_DIR = '/etc/kubebus/metrics-tls';

export const metricsTlsSecretName = (operator: Operator) => `kubebus-${operator.name}-metrics-tls`;

/** The name in the certificate, and the one the PodMonitor verifies. */
export const metricsServerName = (operator: Operator, namespace: string) =>
  `kubebus-${operator.name}-metrics.${namespace}.svc`;

export function metricsCertificateOf(operator: Operator, settings: PackageSettings): object[] {
  const secret = settings.metricsTlsSecret;
  if (secret === undefined) return [];
  const serverName = metricsServerName(operator, settings.namespace);
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: {
        name: secret,
        namespace: settings.namespace,
        labels: { ...operatorLabels(operator), ...settings.extraLabels },
      },
      spec: {
        secretName: secret,
        duration: '2160h',
        renewBefore: '360h',
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        usages: ['server auth', 'digital signature', 'key encipherment'],
        dnsNames: [serverName, `${serverName}.cluster.local`],
        // the CA that signs NATS' certificates: its ca.crt lands in this Secret too
        issuerRef: { name: NATS_CA_SECRET, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
  ];
}

/** KUBEBUS_METRICS_CERT and KUBEBUS_METRICS_KEY at the mounted files (none without the Secret). */
export function metricsTlsEnv(settings: PackageSettings): object[] {
  return settings.metricsTlsSecret === undefined
    ? []
    : [
        { name: 'KUBEBUS_METRICS_CERT', value: `${METRICS_TLS_DIR}/tls.crt` },
        { name: 'KUBEBUS_METRICS_KEY', value: `${METRICS_TLS_DIR}/tls.key` },
      ];
}

export function metricsTlsMounts(settings: PackageSettings): object[] {
  return settings.metricsTlsSecret === undefined
    ? []
    : [{ name: 'metrics-tls', mountPath: METRICS_TLS_DIR, readOnly: true }];
}

/** The Secret's certificate and key; ca.crt is the scraper's, not the roles'. */
export function metricsTlsVolumes(settings: PackageSettings): object[] {
  return settings.metricsTlsSecret === undefined
    ? []
    : [
        {
          name: 'metrics-tls',
          secret: {
            secretName: settings.metricsTlsSecret,
            items: [
              { key: 'tls.crt', path: 'tls.crt' },
              { key: 'tls.key', path: 'tls.key' },
            ],
          },
        },
      ];
}

/** The PodMonitor's tlsConfig: verified against the Secret's CA, or skipped (self-signed). */
export function scrapeTlsConfig(operator: Operator, settings: PackageSettings): object {
  if (settings.metricsTlsSecret === undefined) return { insecureSkipVerify: true };
  return {
    ca: { secret: { name: settings.metricsTlsSecret, key: 'ca.crt' } },
    serverName: metricsServerName(operator, settings.namespace),
  };
}
