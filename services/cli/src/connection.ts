// Where the CLI connects, like the nats CLI finds it: flags first (--server,
// --user, --password, --creds), then a nats context (--context, or the
// selected one in ~/.config/nats/context.txt), then the environment
// (KUBEBUS_NATS_URL, KUBEBUS_NATS_USER, KUBEBUS_NATS_PASSWORD).
import { credsAuthenticator, type ConnectionOptions } from '@nats-io/nats-core';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface ConnectionFlags {
  readonly server?: string | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly creds?: string | undefined;
  readonly context?: string | undefined;
}

interface NatsContext {
  readonly url?: string;
  readonly user?: string;
  readonly password?: string;
  readonly creds?: string;
}

export interface Connection {
  readonly options: ConnectionOptions;
  /** where it came from, for error messages */
  readonly from: string;
  readonly url: string;
}

function contextsDir(env: NodeJS.ProcessEnv): string {
  return join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'nats');
}

/** The named context, or the selected one; undefined when there is none. */
function readContext(
  name: string | undefined,
  env: NodeJS.ProcessEnv,
): { name: string; context: NatsContext } | undefined {
  const dir = contextsDir(env);
  const selected = join(dir, 'context.txt');
  const chosen =
    name ?? (existsSync(selected) ? readFileSync(selected, 'utf8').trim() || undefined : undefined);
  if (chosen === undefined) return undefined;
  const file = join(dir, 'context', `${chosen}.json`);
  if (!existsSync(file))
    throw new Error(`no nats context "${chosen}" (${file}); nats context ls lists them`);
  return { name: chosen, context: JSON.parse(readFileSync(file, 'utf8')) as NatsContext };
}

export function connectionOf(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Connection {
  // a context is used when asked for, or when neither flags nor environment name a server
  const useContext =
    flags.context !== undefined ||
    (flags.server === undefined && env['KUBEBUS_NATS_URL'] === undefined);
  const found = useContext ? readContext(flags.context, env) : undefined;
  const context = found?.context ?? {};
  const url = flags.server ?? (found === undefined ? env['KUBEBUS_NATS_URL'] : context.url);
  if (url === undefined || url === '')
    throw new Error(
      'no NATS server: give --server nats://host:4222, a nats context (--context), or KUBEBUS_NATS_URL',
    );
  const user =
    flags.user ?? (found === undefined ? env['KUBEBUS_NATS_USER'] : context.user) ?? undefined;
  const pass =
    flags.password ??
    (found === undefined ? env['KUBEBUS_NATS_PASSWORD'] : context.password) ??
    undefined;
  const creds = flags.creds ?? context.creds;
  if (creds !== undefined && !existsSync(creds)) throw new Error(`--creds ${creds} does not exist`);
  return {
    url,
    from:
      flags.server !== undefined
        ? '--server'
        : found !== undefined
          ? `nats context ${found.name}`
          : 'KUBEBUS_NATS_URL',
    options: {
      servers: url.split(','),
      ...(user === undefined ? {} : { user }),
      ...(pass === undefined ? {} : { pass }),
      ...(creds === undefined
        ? {}
        : { authenticator: credsAuthenticator(new Uint8Array(readFileSync(creds))) }),
    },
  };
}
