// Kubeconfig files for the test bed's users (JSON is valid kubeconfig YAML).
import { writeFileSync } from 'node:fs';
import { pem, type ClientCert } from './pki.js';

export function writeKubeconfig(
  file: string,
  server: string,
  caCert: string,
  user: string,
  client: ClientCert,
): void {
  const b64 = (path: string) => Buffer.from(pem(path)).toString('base64');
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'testbed', cluster: { server, 'certificate-authority-data': b64(caCert) } }],
    users: [
      {
        name: user,
        user: {
          'client-certificate-data': b64(client.cert),
          'client-key-data': b64(client.key),
        },
      },
    ],
    contexts: [{ name: 'testbed', context: { cluster: 'testbed', user } }],
    'current-context': 'testbed',
  };
  writeFileSync(file, JSON.stringify(kubeconfig, null, 2) + '\n', { mode: 0o600 });
}

/** A kubeconfig that authenticates with a bearer token (a service account's, from TokenRequest). */
export function writeTokenKubeconfig(
  file: string,
  server: string,
  caCert: string,
  user: string,
  token: string,
): void {
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'testbed',
        cluster: {
          server,
          'certificate-authority-data': Buffer.from(pem(caCert)).toString('base64'),
        },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'testbed', context: { cluster: 'testbed', user } }],
    'current-context': 'testbed',
  };
  writeFileSync(file, JSON.stringify(kubeconfig, null, 2) + '\n', { mode: 0o600 });
}
