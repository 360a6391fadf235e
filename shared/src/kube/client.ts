// A small, dynamic Kubernetes REST client over the credentials of a KubeConfig
// (see kubeconfig.ts). kubebus works on resources
// named at run time, streams watches line by line with its own inactivity limit,
// and counts every request in client-go's rest_client_* metrics; see
// docs/adr/0002-own-rest-client.md.
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { RestClientMetrics } from '../obs/rest-client-metrics.js';
import { apiErrorFrom, KubeApiError, noAnswer } from './api-error.js';
import type { KubeResponse } from './http2-connection.js';
import type { KubeCredentials } from './kubeconfig.js';
import { KubeTransport } from './transport.js';
import { ApiserverWarnings, processWarnings, type WarningSink } from './warnings.js';

export interface RequestInit {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** the representation asked for (default application/json) */
  readonly accept?: string;
}

export interface KubeClientOptions {
  readonly timeoutMs?: number;
  /** client-side throttle (client-go's QPS and burst), told each request's path */
  readonly throttle?: { take(path: string): Promise<void> };
  /** every write is sent with dryRun=All (replay) */
  readonly dryRun?: boolean;
  /** sent on every request, as client-go does: it names the manager in managedFields and audit logs */
  readonly userAgent?: string;
  /** where the apiserver's warnings are logged, each distinct one once (default: process warnings) */
  readonly log?: WarningSink;
}

export const ContentTypes = {
  json: 'application/json',
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  jsonPatch: 'application/json-patch+json',
} as const;

/** Responses larger than this are refused (Kubernetes objects stay under 1.5 MB; lists page). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class KubeClient {
  readonly server: string;
  readonly #base: URL;

  readonly #timeoutMs: number;
  readonly #throttle: { take(path: string): Promise<void> } | undefined;
  readonly #dryRun: boolean;
  readonly #userAgent: string | undefined;
  readonly #transport: KubeTransport;
  readonly #warnings: ApiserverWarnings;

  constructor(
    kc: KubeCredentials,
    private readonly metrics: RestClientMetrics,
    options: KubeClientOptions = {},
  ) {
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#throttle = options.throttle;
    this.#dryRun = options.dryRun ?? false;
    this.#userAgent = options.userAgent;
    this.#warnings = new ApiserverWarnings(options.log ?? processWarnings, metrics.warnings);
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/$/, '');
    this.#base = new URL(this.server);
    this.#transport = new KubeTransport(kc, {
      onConnection: () => {
        metrics.connections?.inc({ host: this.#base.host });
      },
    });
  }

  /** Closes idle keep-alive connections (at shutdown). */
  close(): void {
    this.#transport.close();
  }

  /** Sends a request and parses the JSON answer; an error status throws KubeApiError. */
  async request<T = unknown>(path: string, init: RequestInit = {}): Promise<T> {
    const method = init.method ?? 'GET';
    const started = performance.now();
    let res: KubeResponse;
    try {
      res = await this.#send(path, init);
    } catch (error) {
      this.#count(method, '<error>', started);
      if (error instanceof KubeApiError) throw error;
      throw noAnswer(error);
    }
    this.#warnings.record(res.headers['warning'], method, path);
    const body = await readBody(res);
    this.#count(method, String(res.statusCode), started);
    const status = res.statusCode;
    if (status === 401) this.#transport.invalidate(); // rotated credentials: read them again
    if (status < 200 || status >= 300) throw apiErrorFrom(status, body, res.headers);
    return (body === '' ? undefined : JSON.parse(body)) as T;
  }

  /** GET an object; undefined when it does not exist (404). */
  async getIfExists<T = unknown>(path: string): Promise<T | undefined> {
    try {
      return await this.request<T>(path);
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /**
   * Opens a streaming GET (a watch); the caller reads the response and must
   * destroy it. `timeoutMs` bounds socket silence, from connecting to the end.
   */
  async openStream(path: string, init: RequestInit = {}): Promise<KubeResponse> {
    const started = performance.now();
    let res: KubeResponse;
    try {
      res = await this.#send(path, { ...init, timeoutMs: init.timeoutMs ?? 0 });
    } catch (error) {
      this.#count('GET', '<error>', started);
      throw noAnswer(error);
    }
    const status = res.statusCode;
    this.#count('GET', String(status), started);
    this.#warnings.record(res.headers['warning'], 'GET', path);
    if (status !== 200) throw apiErrorFrom(status, await readBody(res), res.headers);
    return res;
  }

  async #send(path: string, init: RequestInit): Promise<KubeResponse> {
    await this.#throttle?.take(path);
    init.signal?.throwIfAborted();
    const url = new URL(path, this.#base);
    // Dry run: the apiserver validates and answers, and persists nothing.
    if (this.#dryRun && (init.method ?? 'GET') !== 'GET') url.searchParams.set('dryRun', 'All');
    for (const [name, value] of Object.entries(init.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    const transport = await this.#transport.get();
    const headers: OutgoingHttpHeaders = {
      ...transport.headers,
      ...(transport.auth === undefined
        ? {}
        : { authorization: `Basic ${Buffer.from(transport.auth).toString('base64')}` }),
      accept: init.accept ?? 'application/json',
      ...(this.#userAgent === undefined ? {} : { 'user-agent': this.#userAgent }),
      ...(body === undefined
        ? {}
        : {
            'content-type': init.contentType ?? ContentTypes.json,
            'content-length': Buffer.byteLength(body),
          }),
    };
    const timeoutMs = init.timeoutMs ?? this.#timeoutMs;
    const method = init.method ?? 'GET';
    if (transport.h2?.speaksH2() === true) {
      try {
        return await transport.h2.request({
          method,
          path: `${url.pathname}${url.search}`,
          headers,
          body,
          timeoutMs,
          ...(init.signal ? { signal: init.signal } : {}),
        });
      } catch (error) {
        if (transport.h2.speaksH2()) throw error;
        // the server does not speak h2: HTTP/1.1 from now on
      }
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const options: RequestOptions = { method, agent: transport.agent, headers };
    return new Promise<KubeResponse>((resolve, reject) => {
      const req = send(
        url,
        { ...options, ...(init.signal ? { signal: init.signal } : {}) },
        (res: IncomingMessage) => {
          resolve({
            statusCode: res.statusCode ?? 0,
            headers: res.headers,
            body: res as AsyncIterable<Buffer>,
            destroy: () => res.destroy(),
          });
        },
      );
      if (timeoutMs > 0) {
        req.setTimeout(timeoutMs, () =>
          req.destroy(new Error(`request timed out after ${timeoutMs} ms`)),
        );
      }
      req.on('error', reject);
      req.end(body);
    });
  }

  #count(method: string, code: string, started: number): void {
    this.metrics.requests.inc({ code, method, host: this.#base.host });
    this.metrics.latency.observe({ verb: method }, (performance.now() - started) / 1_000);
  }
}

async function readBody(res: KubeResponse): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      res.destroy();
      throw new KubeApiError(0, 'TooLarge', `response larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
