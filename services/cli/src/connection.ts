// Where a command connects, as the nats CLI finds it: flags first (--server,
// --user, --password, --creds), then a nats context (--context, or the
// selected one in ~/.config/nats/context.txt), then the environment
// (KUBEBUS_NATS_URL, KUBEBUS_NATS_USER, KUBEBUS_NATS_PASSWORD_FILE or
// KUBEBUS_NATS_PASSWORD — the variables the roles read). TLS files merge
// instead: KUBEBUS_NATS_CA/CERT/KEY win over a context's ca/cert/key, and any
// of them makes TLS required whatever names the server. Every command that
// talks to NATS connects through here, `kubebus replay` included.
import { natsTlsOf } from '@kubebus/shared/bus';
import { credsAuthenticator, type ConnectionOptions } from '@nats-io/nats-core';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './usage-error.js';

export interface ConnectionFlags {
  readonly server?: string | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly creds?: string | undefined;
  readonly context?: string | undefined;
}

/** The variables read here, parsed by the caller. */
export interface ConnectionEnv {
  readonly KUBEBUS_NATS_URL?: string | undefined;
  readonly KUBEBUS_NATS_USER?: string | undefined;
  readonly KUBEBUS_NATS_PASSWORD?: string | undefined;
  /** wins over KUBEBUS_NATS_PASSWORD, as for the roles */
  readonly KUBEBUS_NATS_PASSWORD_FILE?: string | undefined;
  /** TLS files, as for the roles: any of them (or a tls:// URL) makes TLS required */
  readonly KUBEBUS_NATS_CA?: string | undefined;
  readonly KUBEBUS_NATS_CERT?: string | undefined;
  readonly KUBEBUS_NATS_KEY?: string | undefined;
  /** nats contexts live in $XDG_CONFIG_HOME/nats (default ~/.config/nats) */
  readonly XDG_CONFIG_HOME?: string | undefined;
}

interface NatsContext {
  readonly url?: string;
  readonly user?: string;
  readonly password?: string;
  readonly creds?: string;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** Nothing names a server: not a flag, not a context, not the environment. */
export class NoNatsServerError extends UsageError {
  override readonly name = 'NoNatsServerError';
}

export interface Connection {
  readonly options: ConnectionOptions;
  /** where it came from, for error messages */
  readonly from: string;
  readonly url: string;
}

function contextsDir(env: ConnectionEnv): string {
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'nats');
}

/** The named context, or the selected one; undefined when there is none. */
function readContext(
  name: string | undefined,
  env: ConnectionEnv,
): { name: string; context: NatsContext } | undefined {
  const dir = contextsDir(env);
  const selected = join(dir, 'context.txt');
  const chosen =
    name ?? (existsSync(selected) ? readFileSync(selected, 'utf8').trim() || undefined : undefined);
  if (chosen === undefined) return undefined;
  const file = join(dir, 'context', `${chosen}.json`);
  if (!existsSync(file))
    throw new UsageError(`no nats context "${chosen}" (${file}); nats context ls lists them`);
  try {
    return { name: chosen, context: JSON.parse(readFileSync(file, 'utf8')) as NatsContext };
  } catch (error) {
    throw new UsageError(
      `cannot read nats context ${file}: ${(error as Error).message}; fix it with nats context edit ${chosen}`,
    );
  }
}

/** The password from the environment: the file's content (trimmed) when one is named. */
function passwordOf(env: ConnectionEnv): string | undefined {
  const file = env.KUBEBUS_NATS_PASSWORD_FILE;
  if (file === undefined) return env.KUBEBUS_NATS_PASSWORD;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(
      `cannot read KUBEBUS_NATS_PASSWORD_FILE ${file}: ${(error as Error).message}; point it at a readable file or unset it`,
    );
  }
}

export function connectionOf(flags: ConnectionFlags, env: ConnectionEnv): Connection {
  // a context is used when asked for, or when neither flags nor environment name a server
  const useContext =
    flags.context !== undefined ||
    (flags.server === undefined && env.KUBEBUS_NATS_URL === undefined);
  const found = useContext ? readContext(flags.context, env) : undefined;
  const context = found?.context ?? {};
  const url = flags.server ?? (found === undefined ? env.KUBEBUS_NATS_URL : context.url);
  if (url === undefined || url === '')
    throw new NoNatsServerError(
      'no NATS server; give --server nats://host:4222, a nats context (--context), or KUBEBUS_NATS_URL',
    );
  const user = flags.user ?? (found === undefined ? env.KUBEBUS_NATS_USER : context.user);
  const pass =
    flags.password ?? (found === undefined ? passwordOf(env) : context.password) ?? undefined;
  const creds = flags.creds ?? context.creds;
  if (creds !== undefined && !existsSync(creds))
    throw new UsageError(`--creds ${creds} does not exist; give the path of a .creds file`);
  const tls = tlsOf(url, tlsFilesOf(env, found));
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
      ...(tls === undefined ? {} : { tls }),
    },
  };
}

interface TlsFile {
  readonly file: string;
  /** what named it, for error messages: KUBEBUS_NATS_CA, or the context's `ca` */
  readonly source: string;
}

interface TlsFiles {
  readonly ca?: TlsFile | undefined;
  readonly cert?: TlsFile | undefined;
  readonly key?: TlsFile | undefined;
}

/**
 * The TLS files, merged: each KUBEBUS_NATS_CA/CERT/KEY wins over the context's
 * ca/cert/key, so a variable is never dropped because a context is in use,
 * and any of them from either source makes TLS required.
 */
function tlsFilesOf(
  env: ConnectionEnv,
  found: { name: string; context: NatsContext } | undefined,
): TlsFiles {
  const pick = (variable: string, fromEnv: string | undefined, key: 'ca' | 'cert' | 'key') => {
    if (fromEnv !== undefined && fromEnv !== '') return { file: fromEnv, source: variable };
    const fromContext = found?.context[key];
    return fromContext === undefined || fromContext === ''
      ? undefined
      : { file: fromContext, source: `the \`${key}\` of nats context ${found?.name ?? ''}` };
  };
  return {
    ca: pick('KUBEBUS_NATS_CA', env.KUBEBUS_NATS_CA, 'ca'),
    cert: pick('KUBEBUS_NATS_CERT', env.KUBEBUS_NATS_CERT, 'cert'),
    key: pick('KUBEBUS_NATS_KEY', env.KUBEBUS_NATS_KEY, 'key'),
  };
}

/** The nats.js `tls` option, required as for the roles; errors name where each file came from. */
function tlsOf(url: string, files: TlsFiles) {
  if ((files.cert === undefined) !== (files.key === undefined)) {
    const [given, missing] =
      files.cert === undefined ? [files.key, 'a certificate'] : [files.cert, 'a key'];
    throw new UsageError(
      `${given?.source ?? ''} is set without ${missing}: give both a client certificate and its key (KUBEBUS_NATS_CERT and KUBEBUS_NATS_KEY, or the context's cert and key), or neither`,
    );
  }
  for (const named of [files.ca, files.cert, files.key]) {
    if (named !== undefined && !readable(named.file))
      throw new UsageError(
        `${named.source} names ${named.file}, which cannot be read: point it at a readable PEM file`,
      );
  }
  return natsTlsOf(url, {
    ...(files.ca === undefined ? {} : { caFile: files.ca.file }),
    ...(files.cert === undefined ? {} : { certFile: files.cert.file }),
    ...(files.key === undefined ? {} : { keyFile: files.key.file }),
  });
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
