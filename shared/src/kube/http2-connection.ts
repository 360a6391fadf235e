// One HTTP/2 connection to the apiserver per set of TLS credentials, every
// request and watch a stream on it (what client-go does): no handshake per
// request, no connection per concurrent request. A connection that goes away
// (GOAWAY, reset, a failed ping) is replaced on the next request; a server
// that does not speak h2 makes the caller fall back to HTTP/1.1 keep-alive.
import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { SecureClientSessionOptions } from 'node:http2';

/** A response as the REST client reads it, whatever the protocol. */
export interface KubeResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: AsyncIterable<Buffer>;
  destroy(): void;
}

export interface StreamRequest {
  readonly method: string;
  /** path and query */
  readonly path: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body: string | undefined;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

const PING_EVERY_MS = 30_000;

export class Http2Connection {
  #session: ClientHttp2Session | undefined;
  #connecting: Promise<ClientHttp2Session> | undefined;
  #pinger: NodeJS.Timeout | undefined;
  /** streams open now: the connection keeps the process alive only while there are some */
  #active = 0;
  /** set when the server refused h2 (ALPN chose http/1.1) */
  #unsupported = false;

  constructor(
    private readonly origin: string,
    private readonly tls: SecureClientSessionOptions,
    private readonly onConnection: () => void,
  ) {}

  /** false once the server turned HTTP/2 down: use HTTP/1.1 */
  speaksH2(): boolean {
    return !this.#unsupported;
  }

  async request(request: StreamRequest): Promise<KubeResponse> {
    const session = await this.#open();
    return new Promise<KubeResponse>((resolve, reject) => {
      let stream: ClientHttp2Stream;
      try {
        stream = session.request(
          {
            ':method': request.method,
            ':path': request.path,
            ...request.headers,
          },
          request.signal === undefined ? {} : { signal: request.signal },
        );
      } catch (error) {
        this.#drop(session);
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      this.#active++;
      if (!session.destroyed) session.ref();
      stream.once('close', () => {
        if (--this.#active === 0 && !session.destroyed) session.unref();
      });
      if (request.timeoutMs > 0) {
        stream.setTimeout(request.timeoutMs, () => {
          stream.destroy(new Error(`request timed out after ${request.timeoutMs} ms`));
        });
      }
      stream.once('response', (headers: IncomingHttpHeaders) => {
        resolve({
          statusCode: Number(headers[':status'] ?? 0),
          headers,
          body: stream as AsyncIterable<Buffer>,
          destroy: () => {
            if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
          },
        });
      });
      stream.once('error', reject);
      stream.end(request.body);
    });
  }

  close(): void {
    clearInterval(this.#pinger);
    this.#session?.close();
    this.#session = undefined;
  }

  async #open(): Promise<ClientHttp2Session> {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  #connect(): Promise<ClientHttp2Session> {
    return new Promise<ClientHttp2Session>((resolve, reject) => {
      const session = connect(this.origin, { ...this.tls, ALPNProtocols: ['h2'] });
      this.onConnection();
      const fail = (error: Error) => {
        if (/ALPN|protocol/i.test(error.message)) this.#unsupported = true;
        reject(error);
      };
      session.once('error', fail);
      session.once('connect', () => {
        session.off('error', fail);
        if (session.alpnProtocol !== 'h2') {
          this.#unsupported = true;
          session.destroy();
          reject(new Error(`the apiserver at ${this.origin} does not speak HTTP/2`));
          return;
        }
        session.on('error', () => {
          this.#drop(session);
        });
        session.once('goaway', () => {
          this.#drop(session);
        });
        session.once('close', () => {
          this.#drop(session);
        });
        if (this.#active === 0) session.unref(); // an idle connection does not keep the process alive
        this.#session = session;
        this.#ping(session);
        resolve(session);
      });
    });
  }

  /** A connection that stops answering pings is replaced (a silent network drop). */
  #ping(session: ClientHttp2Session): void {
    clearInterval(this.#pinger);
    const pinger = setInterval(() => {
      if (session.destroyed || session.closed) {
        clearInterval(pinger);
        return;
      }
      const timer = setTimeout(() => {
        session.destroy(new Error('ping unanswered'));
      }, PING_EVERY_MS);
      timer.unref();
      session.ping((error) => {
        clearTimeout(timer);
        if (error !== null) session.destroy(error);
      });
    }, PING_EVERY_MS);
    pinger.unref();
    this.#pinger = pinger;
  }

  #drop(session: ClientHttp2Session): void {
    if (this.#session === session) this.#session = undefined;
    if (!session.closed) session.close();
  }
}
