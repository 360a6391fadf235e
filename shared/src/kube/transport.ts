// How requests reach the apiserver: one HTTP/2 connection (or, failing that,
// one keep-alive agent) per set of credentials. client-node's applyToHTTPSOptions builds a fresh agent without
// keep-alive on every call (a TLS handshake per request: ~10× the client CPU),
// so kubebus reads the credentials through it at most every `refreshMs`, and
// builds a new agent only when they change (rotated certificates, a refreshed
// service-account token, an exec plugin's new token).
import type { KubeCredentials } from './kubeconfig.js';
import { createHash } from 'node:crypto';
import { Agent as HttpAgent, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions, type RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { Http2Connection } from './http2-connection.js';

export interface Transport {
  /** HTTP/2 to the apiserver when it speaks it (https, no proxy) */
  readonly h2: Http2Connection | undefined;
  /** HTTP/1.1 keep-alive: proxies, plain http, servers without h2 */
  readonly agent: HttpAgent;
  /** authentication headers, names in lower case */
  readonly headers: OutgoingHttpHeaders;
  readonly auth?: string;
}

const TLS_FIELDS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
] as const;

export class KubeTransport {
  #current: { transport: Transport; fingerprint: string; at: number } | undefined;
  #refreshing: Promise<Transport> | undefined;

  constructor(
    private readonly kc: KubeCredentials,
    private readonly options: {
      /** how long credentials read from the kubeconfig are trusted before reading again */
      readonly refreshMs?: number;
      /** told of every new connection (rest_client connection metric, tests) */
      readonly onConnection?: () => void;
    } = {},
  ) {}

  /** The agent and headers to send a request with. */
  async get(): Promise<Transport> {
    const current = this.#current;
    if (
      current !== undefined &&
      performance.now() - current.at < (this.options.refreshMs ?? 30_000)
    )
      return current.transport;
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  /** Forgets the credentials (after a 401): the next request reads them again. */
  invalidate(): void {
    if (this.#current !== undefined) this.#current.at = -Infinity;
  }

  close(): void {
    this.#current?.transport.agent.destroy();
    this.#current?.transport.h2?.close();
  }

  #http2For(template: RequestOptions): Http2Connection | undefined {
    const cluster = this.kc.getCurrentCluster();
    if (cluster === null || cluster.proxyUrl !== undefined || !cluster.server.startsWith('https:'))
      return undefined;
    return new Http2Connection(new URL(cluster.server).origin, tlsOptions(template), () => {
      this.options.onConnection?.();
    });
  }

  async #refresh(): Promise<Transport> {
    const template: RequestOptions = { headers: {} };
    await this.kc.applyToHTTPSOptions(template);
    const fingerprint = fingerprintOf(template);
    const previous = this.#current;
    const sameTls = previous !== undefined && previous.fingerprint === fingerprint;
    if (sameTls) (template.agent as HttpAgent | undefined)?.destroy();
    // A new token only changes a header; new TLS material needs new connections.
    const transport: Transport = {
      h2: sameTls ? previous.transport.h2 : this.#http2For(template),
      agent: sameTls ? previous.transport.agent : this.#agentFor(template),
      // lower case once here, not per request: HTTP/2 header names must be
      headers: Object.fromEntries(
        Object.entries(template.headers as OutgoingHttpHeaders).map(([name, value]) => [
          name.toLowerCase(),
          value,
        ]),
      ),
      ...(typeof template.auth === 'string' ? { auth: template.auth } : {}),
    };
    this.#current = { transport, fingerprint, at: performance.now() };
    // In-flight requests finish on the old agent, which is closed a minute later.
    if (previous !== undefined && !sameTls)
      setTimeout(() => {
        previous.transport.agent.destroy();
        previous.transport.h2?.close();
      }, 60_000).unref();
    return transport;
  }

  #agentFor(template: RequestOptions): HttpAgent {
    const server = this.kc.getCurrentCluster();
    const given = template.agent as HttpAgent | undefined;
    // A proxy agent (socks, http(s) proxy) is kept as client-node built it.
    if (server?.proxyUrl !== undefined && given !== undefined) return given;
    given?.destroy();
    const keepAlive = {
      keepAlive: true,
      keepAliveMsecs: 30_000,
      maxFreeSockets: 64,
      scheduling: 'lifo' as const,
    };
    const agent = server?.server.startsWith('http:')
      ? new HttpAgent(keepAlive)
      : new HttpsAgent({ ...keepAlive, ...tlsOptions(template) });
    const onConnection = this.options.onConnection;
    if (onConnection !== undefined) {
      const create = agent.createConnection.bind(agent) as (...args: unknown[]) => Socket;
      (agent as unknown as { createConnection: (...args: unknown[]) => Socket }).createConnection =
        (...args: unknown[]) => {
          onConnection();
          return create(...args);
        };
    }
    return agent;
  }
}

function tlsOptions(template: RequestOptions): AgentOptions {
  const options: Record<string, unknown> = {};
  for (const field of TLS_FIELDS) {
    if (template[field] !== undefined) options[field] = template[field];
  }
  return options;
}

function fingerprintOf(template: RequestOptions): string {
  const hash = createHash('sha256');
  for (const field of TLS_FIELDS) hash.update(`${field}=${JSON.stringify(template[field] ?? '')};`);
  return hash.digest('hex');
}
