// What `kubebus dev` tells the person to export in another terminal, so that
// kubectl and the bus commands (history, status, dlq) reach what dev runs.
// For the nats-server dev started: its tls:// URL, the CA made for this run,
// the user, and the file holding the password made for this run — never the
// password itself. For a server the person named: its URL, as before (the
// rest is already in their environment).
import type { TestEnvironment } from '../testing-api.js';

/** Every variable a client reads its password from directly: never printed. */
const SECRET = new Set(['KUBEBUS_NATS_PASSWORD']);

export function devExports(
  environment: Pick<TestEnvironment, 'cluster' | 'kubeconfigPath' | 'natsUrl' | 'natsEnv'>,
  natsNamed: boolean,
): string {
  const nats = natsNamed ? { KUBEBUS_NATS_URL: environment.natsUrl } : environment.natsEnv;
  const variables: Record<string, string> = {
    ...(environment.cluster === 'existing' ? {} : { KUBECONFIG: environment.kubeconfigPath }),
    ...nats,
  };
  return Object.entries(variables)
    .filter(([name]) => !SECRET.has(name))
    .map(([name, value]) => `${name}=${shellWord(value)}`)
    .join(' ');
}

/** A value as one shell word: bare when safe, else single-quoted. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
