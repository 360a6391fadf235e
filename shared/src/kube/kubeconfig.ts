// Credentials for the apiserver from a kubeconfig file or a pod's service
// account, read without @kubernetes/client-node: its generated API costs each
// process ~70 MB of memory that a service using only credentials does not
// need (docs/adr/0006). Client certificates, bearer tokens (inline, token
// files re-read as they rotate), basic auth and the in-cluster service account
// are read here; what this does not cover (exec plugins, auth providers,
// proxies) is handed to client-node, loaded only then.
import { existsSync, readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

/** What the REST client needs; @kubernetes/client-node's KubeConfig has this shape too. */
export interface KubeCredentials {
  getCurrentCluster(): { readonly server: string; readonly proxyUrl?: string | undefined } | null;
  /** sets TLS material and authentication headers on a request's options */
  applyToHTTPSOptions(options: RequestOptions): Promise<void>;
}

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

interface NamedCluster {
  readonly name: string;
  readonly cluster: Record<string, unknown>;
}
interface NamedUser {
  readonly name: string;
  readonly user?: Record<string, unknown>;
}
interface NamedContext {
  readonly name: string;
  readonly context: { readonly cluster: string; readonly user: string };
}
interface KubeconfigFile {
  readonly 'current-context'?: string;
  readonly clusters?: NamedCluster[];
  readonly users?: NamedUser[];
  readonly contexts?: NamedContext[];
}

interface Static {
  readonly server: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly insecure: boolean;
  readonly serverName?: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly basic?: string;
}

class StaticCredentials implements KubeCredentials {
  constructor(private readonly c: Static) {}

  getCurrentCluster() {
    return { server: this.c.server };
  }

  async applyToHTTPSOptions(options: RequestOptions): Promise<void> {
    const { c } = this;
    if (c.ca !== undefined) options.ca = c.ca;
    if (c.cert !== undefined) options.cert = c.cert;
    if (c.key !== undefined) options.key = c.key;
    if (c.insecure) options.rejectUnauthorized = false;
    if (c.serverName !== undefined) options.servername = c.serverName;
    // A token file is read at every refresh: projected service-account tokens rotate.
    const token = c.tokenFile !== undefined ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
    const headers = (options.headers ?? {}) as Record<string, string>;
    if (token !== undefined && token !== '') headers['Authorization'] = `Bearer ${token}`;
    options.headers = headers;
    if (c.basic !== undefined) options.auth = c.basic;
    await Promise.resolve();
  }
}

/**
 * The kubeconfig files to read, by client-go's loading rules: the files
 * KUBECONFIG lists (':'-separated; missing ones skipped), else ~/.kube/config
 * when it exists; none means the pod's service account.
 */
export function kubeconfigFiles(env: Readonly<Record<string, string | undefined>>): string[] {
  const listed = (env['KUBECONFIG'] ?? '').split(delimiter).filter((file) => file !== '');
  if (listed.length > 0) return listed.filter((file) => existsSync(file));
  const home = env['HOME'];
  const fallback = home === undefined ? undefined : join(home, '.kube', 'config');
  return fallback !== undefined && existsSync(fallback) ? [fallback] : [];
}

/** Entries merged as client-go merges them: the first file to name one wins. */
interface Merged {
  readonly currentContext: string | undefined;
  readonly contexts: Map<string, NamedContext['context']>;
  readonly clusters: Map<string, { entry: Record<string, unknown>; file: string }>;
  readonly users: Map<string, { entry: Record<string, unknown>; file: string }>;
}

function merge(paths: readonly string[]): Merged {
  const merged: Merged & { currentContext: string | undefined } = {
    currentContext: undefined,
    contexts: new Map(),
    clusters: new Map(),
    users: new Map(),
  };
  for (const path of paths) {
    const file = parse(readFileSync(path, 'utf8')) as KubeconfigFile | null;
    const current = file?.['current-context'];
    if (merged.currentContext === undefined && current !== undefined && current !== '')
      merged.currentContext = current;
    for (const { name, context } of file?.contexts ?? [])
      if (!merged.contexts.has(name)) merged.contexts.set(name, context);
    for (const { name, cluster } of file?.clusters ?? [])
      if (!merged.clusters.has(name)) merged.clusters.set(name, { entry: cluster, file: path });
    for (const { name, user } of file?.users ?? [])
      if (!merged.users.has(name)) merged.users.set(name, { entry: user ?? {}, file: path });
  }
  return merged;
}

/**
 * The credentials of a kubeconfig — one file or a list merged as client-go
 * merges KUBECONFIG — at its current context or the one named, or of the
 * pod's service account when no file is given.
 */
export async function loadKubeConfig(
  paths: string | readonly string[] | undefined,
  env: Readonly<Record<string, string | undefined>> = {},
  options: { readonly context?: string } = {},
): Promise<KubeCredentials> {
  const files = paths === undefined ? [] : typeof paths === 'string' ? [paths] : paths;
  if (files.length === 0) {
    const host = env['KUBERNETES_SERVICE_HOST'];
    const port = env['KUBERNETES_SERVICE_PORT'] ?? '443';
    if (host === undefined) throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST is not set');
    return new StaticCredentials({
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      ca: readFileSync(join(SERVICE_ACCOUNT, 'ca.crt')),
      insecure: false,
      tokenFile: join(SERVICE_ACCOUNT, 'token'),
    });
  }
  const merged = merge(files);
  const contextName = options.context ?? merged.currentContext;
  const context = contextName === undefined ? undefined : merged.contexts.get(contextName);
  if (context === undefined)
    throw new Error(
      options.context === undefined
        ? `it has no current context (${contextName ?? 'none set'})`
        : `it has no context named ${options.context}`,
    );
  const clusterEntry = merged.clusters.get(context.cluster);
  if (clusterEntry === undefined)
    throw new Error(`its context names a missing cluster ${context.cluster}`);
  const cluster = clusterEntry.entry;
  const userEntry = merged.users.get(context.user);
  const user = userEntry?.entry ?? {};
  const needs =
    'exec' in user
      ? 'an exec plugin'
      : 'auth-provider' in user
        ? 'an auth provider'
        : 'proxy-url' in cluster
          ? 'a proxy'
          : 'impersonate' in user || 'as' in user
            ? 'impersonation'
            : undefined;
  if (needs !== undefined)
    return withClientNode(userEntry?.file ?? clusterEntry.file, contextName ?? '', needs);
  // relative paths in a kubeconfig are relative to the file that holds them
  const path = userEntry?.file ?? clusterEntry.file;
  const base = dirname(path);
  const file_ = (name: unknown, from = base) =>
    typeof name === 'string' ? readFileSync(isAbsolute(name) ? name : join(from, name)) : undefined;
  const clusterBase = dirname(clusterEntry.file);
  const data = (value: unknown) =>
    typeof value === 'string' ? Buffer.from(value, 'base64') : undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const server = text(cluster['server']);
  if (server === undefined) throw new Error(`cluster ${context.cluster} has no server`);
  const username = text(user['username']);
  const tokenFile = text(user['tokenFile']);
  return new StaticCredentials({
    server,
    ...optional(
      'ca',
      data(cluster['certificate-authority-data']) ??
        file_(cluster['certificate-authority'], clusterBase),
    ),
    ...optional('cert', data(user['client-certificate-data']) ?? file_(user['client-certificate'])),
    ...optional('key', data(user['client-key-data']) ?? file_(user['client-key'])),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    ...optional('serverName', text(cluster['tls-server-name'])),
    ...optional('token', text(user['token'])),
    ...optional(
      'tokenFile',
      tokenFile === undefined
        ? undefined
        : isAbsolute(tokenFile)
          ? tokenFile
          : join(base, tokenFile),
    ),
    ...optional(
      'basic',
      username === undefined ? undefined : `${username}:${text(user['password']) ?? ''}`,
    ),
  });
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Exec plugins, auth providers, impersonation and proxies: client-node's own loader. */
async function withClientNode(
  path: string,
  context: string,
  needs: string,
): Promise<KubeCredentials> {
  // an optional peer of the kubebus package: most kubeconfigs never need it
  const { KubeConfig } = await import('@kubernetes/client-node').catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(`this kubeconfig uses ${needs}: npm install @kubernetes/client-node`);
  });
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  if (context !== '') kc.setCurrentContext(context);
  return kc;
}
