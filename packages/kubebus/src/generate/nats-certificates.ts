// The NATS servers' certificates from cert-manager: a self-signed root that
// only signs the cluster's CA, the CA as an Issuer, and one certificate for
// every NATS pod (client port and routes: servers verify each other, so it is
// both server and client). Its Secret (tls.crt, tls.key, ca.crt) is what the
// StatefulSet mounts, and kubebus' pods mount only its ca.crt.
import type { PackageSettings } from './settings.js';

export const NATS_CA_SECRET = 'nats-ca';

export function natsCertificatesOf(settings: PackageSettings, tlsSecret: string): object[] {
  const ns = settings.namespace;
  const metadata = (name: string) => ({
    name,
    namespace: ns,
    labels: { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/part-of': 'kubebus' },
  });
  const names = (host: string) => [
    host,
    `${host}.${ns}`,
    `${host}.${ns}.svc`,
    `${host}.${ns}.svc.cluster.local`,
  ];
  const ecdsa = { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' };
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: metadata('nats-selfsigned'),
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: metadata(NATS_CA_SECRET),
      spec: {
        isCA: true,
        commonName: 'kubebus-nats-ca',
        secretName: NATS_CA_SECRET,
        duration: '87600h',
        privateKey: ecdsa,
        issuerRef: { name: 'nats-selfsigned', kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: metadata(NATS_CA_SECRET),
      spec: { ca: { secretName: NATS_CA_SECRET } },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: metadata(tlsSecret),
      spec: {
        secretName: tlsSecret,
        duration: '2160h',
        renewBefore: '360h',
        privateKey: ecdsa,
        usages: ['server auth', 'client auth', 'digital signature', 'key encipherment'],
        // the client Service, every pod behind the headless one (routes), and loopback
        dnsNames: [...names('nats'), ...names('*.nats-headless'), 'localhost'],
        ipAddresses: ['127.0.0.1'],
        issuerRef: { name: NATS_CA_SECRET, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
  ];
}
