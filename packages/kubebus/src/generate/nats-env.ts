// How a kubebus container finds NATS: the URL, its user, and the user's
// password from the NATS credentials Secret (the key is the user's name).
import type { PackageSettings } from './settings.js';

export function natsEnv(settings: PackageSettings, user: string): object[] {
  return [
    { name: 'KUBEBUS_NATS_URL', value: settings.natsUrl },
    { name: 'KUBEBUS_NATS_USER', value: user },
    {
      name: 'KUBEBUS_NATS_PASSWORD',
      valueFrom: { secretKeyRef: { name: settings.natsSecret, key: user } },
    },
  ];
}
