// Credentials for the apiserver from a kubeconfig file or a pod's service
// account, read without @kubernetes/client-node: its generated API costs each
// process ~70 MB of memory that a service using only credentials does not
// need (docs/adr/0006). Client certificates, bearer tokens (inline, token
// files re-read as they rotate), basic auth and the in-cluster service account
// are read here; what this does not cover (exec plugins, auth providers,
// proxies) is handed to client-node, loaded only then.
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { dirname, isAbsolute, join } from 'node:path';
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

/** The credentials of the kubeconfig at `path`, or of the pod's service account when `path` is undefined. */
export async function loadKubeConfig(
  path: string | undefined,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<KubeCredentials> {
  if (path === undefined) {
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
  const file = parse(readFileSync(path, 'utf8')) as KubeconfigFile | null;
  const contextName = file?.['current-context'];
  const context = file?.contexts?.find((c) => c.name === contextName)?.context;
  if (context === undefined)
    throw new Error(`it has no current context (${contextName ?? 'none set'})`);
  const cluster = file?.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (cluster === undefined)
    throw new Error(`its context names a missing cluster ${context.cluster}`);
  const user = file?.users?.find((u) => u.name === context.user)?.user ?? {};
  if (
    'exec' in user ||
    'auth-provider' in user ||
    'proxy-url' in cluster ||
    'impersonate' in user ||
    'as' in user
  ) {
    return withClientNode(path);
  }
  const base = dirname(path);
  const file_ = (name: unknown) =>
    typeof name === 'string' ? readFileSync(isAbsolute(name) ? name : join(base, name)) : undefined;
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
      data(cluster['certificate-authority-data']) ?? file_(cluster['certificate-authority']),
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
async function withClientNode(path: string): Promise<KubeCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}
