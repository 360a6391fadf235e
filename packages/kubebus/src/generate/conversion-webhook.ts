// What serves the conversion webhook of a resource in several versions, in a
// cluster: a Service in front of the reconcilers (the role that holds the
// conversion code) on the webhook port, the serving certificate from
// cert-manager (a CA of its own, made by a self-signed Issuer, signs it; the
// CA is injected into the CRD by the cert-manager.io/inject-ca-from
// annotation crdOf writes), and what the
// reconciler's container needs to serve it: the port, the Secret mounted, the
// variables naming its files (re-read on renewal).
import type { Operator } from '@kubebus/shared/definition';
import { conversionServiceName } from '../api/conversion-target.js';
import { operatorLabels, selectorLabels } from './names.js';
import type { PackageSettings } from './settings.js';

export const WEBHOOK_PORT = 9443;
const MOUNT = '/var/run/kubebus/conversion-webhook';

export function isVersioned(operator: Operator): boolean {
  return operator.for.versions.length > 1;
}

function secretOf(operator: Operator): string {
  return `${conversionServiceName(operator.for)}-tls`;
}

/** The Service, Issuer and Certificate of the webhook; none for a single-version resource. */
export function conversionWebhookObjects(
  operator: Operator,
  settings: Pick<PackageSettings, 'namespace' | 'extraLabels'>,
): object[] {
  if (!isVersioned(operator)) return [];
  const name = conversionServiceName(operator.for);
  const ns = settings.namespace;
  const metadata = (objectName: string) => ({
    name: objectName,
    namespace: ns,
    labels: { ...operatorLabels(operator), ...settings.extraLabels },
  });
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata(name),
      spec: {
        selector: selectorLabels(operator, 'reconciler'),
        ports: [{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }],
      },
    },
    // a CA chain, as for NATS: the self-signed Issuer signs a long-lived CA, the CA signs the
    // serving certificate. cainjector puts the CA in the CRD, so a renewed serving certificate
    // (a new leaf, the same CA) is trusted at once: no conversion outage on renewal
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: metadata(`${name}-selfsigned`),
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: metadata(`${name}-ca`),
      spec: {
        isCA: true,
        commonName: `${name}-ca`,
        secretName: `${name}-ca`,
        duration: '87600h',
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { name: `${name}-selfsigned`, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: metadata(`${name}-ca`),
      spec: { ca: { secretName: `${name}-ca` } },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: metadata(name),
      spec: {
        secretName: secretOf(operator),
        dnsNames: [`${name}.${ns}.svc`, `${name}.${ns}.svc.cluster.local`],
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        issuerRef: { name: `${name}-ca`, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
  ];
}

/** What the reconciler's container adds to serve the webhook. */
export function webhookContainerParts(operator: Operator) {
  if (!isVersioned(operator)) return { env: [], ports: [], mounts: [], volumes: [] };
  return {
    env: [
      { name: 'KUBEBUS_WEBHOOK_PORT', value: String(WEBHOOK_PORT) },
      { name: 'KUBEBUS_WEBHOOK_CERT', value: `${MOUNT}/tls.crt` },
      { name: 'KUBEBUS_WEBHOOK_KEY', value: `${MOUNT}/tls.key` },
    ],
    ports: [{ name: 'webhook', containerPort: WEBHOOK_PORT }],
    mounts: [{ name: 'conversion-webhook-tls', mountPath: MOUNT, readOnly: true }],
    volumes: [{ name: 'conversion-webhook-tls', secret: { secretName: secretOf(operator) } }],
  };
}
