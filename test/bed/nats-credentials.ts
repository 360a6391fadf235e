// The one user of a loopback nats-server that `kubebus dev` and the test kit
// start: a password made per run, never fixed, never printed. The server
// reads it from its environment (no secret in its configuration file, as in
// every shipped one); clients read it from a file only the user can read, the
// way a mounted Secret is read (KUBEBUS_NATS_PASSWORD_FILE).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOOPBACK_NATS_USER = 'kubebus';
/** the variable the server's `authorization` block reads the password from */
const PASSWORD_VARIABLE = 'LOOPBACK_NATS_PASSWORD';

export interface NatsCredentials {
  /** the server's `authorization` block, the password an environment reference */
  readonly serverConfig: string;
  /** the server process's environment: the password */
  readonly serverEnv: Readonly<Record<string, string>>;
  /** what a kubebus client reads: the user and the file holding the password */
  readonly clientEnv: {
    readonly KUBEBUS_NATS_USER: string;
    readonly KUBEBUS_NATS_PASSWORD_FILE: string;
  };
}

/** A user with a new random password; the password file (mode 0600) goes in `dir`. */
export function loopbackCredentials(dir: string): NatsCredentials {
  const password = randomBytes(24).toString('hex');
  const passwordFile = join(dir, 'nats-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  return {
    serverConfig: [
      'authorization {',
      `  user: ${LOOPBACK_NATS_USER}`,
      `  password: $${PASSWORD_VARIABLE}`,
      '}',
    ].join('\n'),
    serverEnv: { [PASSWORD_VARIABLE]: password },
    clientEnv: {
      KUBEBUS_NATS_USER: LOOPBACK_NATS_USER,
      KUBEBUS_NATS_PASSWORD_FILE: passwordFile,
    },
  };
}
