// How a kubebus container finds NATS: the URL, its user, the user's password
// from the NATS credentials Secret (the key is the user's name), and, when the
// package ships TLS, the CA that signed the servers' certificates: with it the
// client refuses a server that does not speak TLS.
import type { PackageSettings } from './settings.js';

/** Where the CA (the `ca.crt` of the NATS TLS Secret) is mounted in kubebus' containers. */
export const NATS_CA_DIR = '/etc/kubebus/nats-ca';

export function natsEnv(settings: PackageSettings, user: string): object[] {
  return [
    { name: 'KUBEBUS_NATS_URL', value: settings.natsUrl },
    { name: 'KUBEBUS_NATS_USER', value: user },
    {
      name: 'KUBEBUS_NATS_PASSWORD',
      valueFrom: { secretKeyRef: { name: settings.natsSecret, key: user } },
    },
    ...(settings.natsTlsSecret === undefined
      ? []
      : [{ name: 'KUBEBUS_NATS_CA', value: `${NATS_CA_DIR}/ca.crt` }]),
  ];
}

/** The CA's volume mount (none without TLS). */
export function natsCaMounts(settings: PackageSettings): object[] {
  return settings.natsTlsSecret === undefined
    ? []
    : [{ name: 'nats-ca', mountPath: NATS_CA_DIR, readOnly: true }];
}

/** The CA's volume: only `ca.crt` of the servers' Secret, never their key. */
export function natsCaVolumes(settings: PackageSettings): object[] {
  return settings.natsTlsSecret === undefined
    ? []
    : [
        {
          name: 'nats-ca',
          secret: {
            secretName: settings.natsTlsSecret,
            items: [{ key: 'ca.crt', path: 'ca.crt' }],
          },
        },
      ];
}
