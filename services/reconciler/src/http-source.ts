// The same reconciler behind Knative: an HTTP CloudEvents sink (binary and
// structured modes) for kubebus' own events and for those of Knative's
// ApiServerSource (Resource and Reference modes). 2xx when reconciled; 503
// (retryable) when it should be retried or the sink is at its in-flight cap;
// 422 (not retried by Knative) for terminal errors; 400 for a body that is not
// a kube CloudEvent or names a key no object can have; 401/403 for a sender
// the sink does not accept (sink-auth.ts); 413 past the size limit; 202 for
// an event of nothing this controller reconciles.
//
// Its bounds (docs/security.md): who may send (sink-auth.ts); a body no
// larger than the NATS server's max_payload (or KUBEBUS_HTTP_MAX_BYTES);
// headers and the request received within their timeouts; at most
// KUBEBUS_HTTP_MAX_IN_FLIGHT requests handled and KUBEBUS_HTTP_MAX_CONNECTIONS
// connections open at once; every key checked by Kubernetes' naming rules
// before it reaches a subject or an apiserver path; dead letters stored once
// per CloudEvent (source, id).
import { controllerOf, keyOfEvent, type KubeCloudEvent } from '@kubebus/shared/events';
import { listen, type Listening, type Logger } from '@kubebus/shared/obs';
import type { Controller, ObjectKey } from '@kubebus/shared/runtime';
import { objectPath, type KubeClient } from '@kubebus/shared/kube';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { HttpSinkConfig } from './config.js';
import {
  checkedKey,
  keyOfApiServerSourceEvent,
  type EventKey,
  type KnownResource,
} from './knative-event.js';
import type { SinkAuthenticator } from './sink-auth.js';
import { loadEventParser, readLimited } from './sink-request.js';

/** A dead letter the sink records: Knative gave up delivering an event. */
export interface SinkDeadLetter {
  readonly key: ObjectKey;
  readonly reason: string;
  readonly eventId: string;
  /** the same for every delivery of one CloudEvent (its source and id): stored once */
  readonly msgId: string;
  readonly traceparent?: string;
}

export interface HttpSourceOptions extends HttpSinkConfig {
  /** the NATS server's max_payload, as the connection last learnt it */
  readonly maxPayload: () => number;
  readonly authenticator: SinkAuthenticator;
  /** the controller's primary resource */
  readonly primary: KnownResource;
  /** every resource it reads (primary, owned, watched): ApiServerSource events name kinds */
  readonly resources: readonly KnownResource[];
  /** reads what an ApiServerSource reference names, to find its owner */
  readonly client: KubeClient;
  /** true, or why not: answered on GET /readyz (Knative probes the serving port) */
  readonly ready: () => true | string;
  /** records an event Knative gave up delivering (POST /dead-letters) in the DLQ */
  readonly deadLetter: (letter: SinkDeadLetter) => Promise<void>;
}

type Settled =
  { status: 200 } | { status: 503; retryAfterMs: number } | { status: 422; reason: string };

/** The object to reconcile for an event: the object itself, or its controller owner. */
export function keyFor(event: KubeCloudEvent, primary: HttpSourceOptions['primary']): EventKey {
  if (event.kbgroup === primary.group && event.kbresource === primary.resource)
    return checkedKey(keyOfEvent(event));
  const owner = event.data === undefined ? undefined : controllerOf(event.data);
  const ownerGroup = owner?.apiVersion.includes('/') ? owner.apiVersion.split('/')[0] : '';
  if (owner === undefined || owner.kind !== primary.kind || ownerGroup !== primary.group)
    return { kind: 'ignored' };
  return checkedKey({
    group: primary.group,
    resource: primary.resource,
    namespace: event.namespace ?? '',
    name: owner.name,
  });
}

/** One Nats-Msg-Id per CloudEvent: CloudEvents are unique by (source, id). */
function deadLetterId(source: string, id: string): string {
  return `knative/${createHash('sha256').update(`${source}\n${id}`).digest('hex').slice(0, 40)}`;
}

const text = { 'content-type': 'text/plain; charset=utf-8' };

export async function startHttpSource(
  controller: Controller,
  options: HttpSourceOptions,
  log: Logger,
): Promise<Listening> {
  const parseEvent = await loadEventParser();
  let inFlight = 0;
  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      // how often the two timeouts above are checked (Node's default: every 30 s)
      connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMs),
    },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'http://sink').pathname;
      if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) {
        probe(path, res);
        return;
      }
      if (inFlight >= options.maxInFlight) {
        res
          .writeHead(503, { ...text, 'retry-after': '1', connection: 'close' })
          .end(`${options.maxInFlight} requests in flight; retry\n`);
        return;
      }
      inFlight++;
      res.once('close', () => {
        inFlight--;
      });
      handle(req, res, path).catch((error: unknown) => {
        log.error({ err: error }, 'http source failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    },
  );
  server.maxConnections = options.maxConnections;

  function probe(path: string, res: ServerResponse): void {
    const ready = path === '/healthz' ? true : options.ready();
    res.writeHead(ready === true ? 200 : 503, text).end(ready === true ? 'ok\n' : `${ready}\n`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    if (path !== '/' && path !== '/dead-letters') {
      res.writeHead(404, text).end('POST events to / and dead letters to /dead-letters\n');
      return;
    }
    // who is sending, before a byte of the body is read
    const auth = await options.authenticator.authenticate(req.headers.authorization);
    if (!auth.ok) {
      res
        .writeHead(auth.status, {
          ...text,
          ...(auth.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
          ...(auth.status === 503 ? { 'retry-after': '1' } : {}),
        })
        .end(`${auth.reason}\n`);
      return;
    }
    const maxBytes = Math.min(options.maxPayload(), options.maxBytes ?? Number.POSITIVE_INFINITY);
    const body = await readLimited(req, maxBytes);
    if (body === undefined) {
      res.writeHead(413, { ...text, connection: 'close' }).end(`body exceeds ${maxBytes} bytes\n`);
      return;
    }
    const parsed = parseEvent(req, body);
    if (!parsed.ok) {
      res.writeHead(400, text).end(`${parsed.reason}\n`);
      return;
    }
    const { id, source, traceparent } = 'kubebus' in parsed ? parsed.kubebus : parsed.knative;
    const found =
      'kubebus' in parsed
        ? keyFor(parsed.kubebus, options.primary)
        : await keyOfApiServerSourceEvent(
            parsed.knative,
            options.primary,
            options.resources,
            (resource, namespace, name) =>
              options.client.getIfExists(objectPath(resource, namespace, name)),
          );
    switch (found.kind) {
      case 'invalid':
        res.writeHead(400, text).end(`${found.reason}\n`);
        return;
      case 'ignored':
        res.writeHead(202).end(); // accepted, but nothing of this controller's
        return;
      case 'key':
        break;
    }
    const { key } = found;
    if (path === '/dead-letters') {
      // Knative's retries are spent: its extensions (binary or structured mode) say what the last answer was
      const { code, data } = parsed.error;
      const detail = data === undefined ? '' : Buffer.from(data, 'base64').toString('utf8');
      await options.deadLetter({
        key,
        reason: `Knative gave up delivering event ${id}: last answer ${code ?? 'unknown'}${detail === '' ? '' : ` ${detail.slice(0, 500)}`}`,
        eventId: id,
        msgId: deadLetterId(source, id),
        ...(traceparent === undefined ? {} : { traceparent }),
      });
      res.writeHead(200).end();
      return;
    }
    const settled = await new Promise<Settled>((resolve) => {
      controller.dispatch({
        key,
        enqueuedAt: Date.now(),
        eventId: id,
        ...(traceparent === undefined ? {} : { traceparent }),
        ack: () => {
          resolve({ status: 200 });
        },
        retry: (delayMs) => {
          resolve({ status: 503, retryAfterMs: delayMs });
        },
        terminate: (reason) => {
          resolve({ status: 422, reason });
        },
        inProgress: () => undefined,
      });
    });
    switch (settled.status) {
      case 200:
        res.writeHead(200).end();
        return;
      case 503:
        res
          .writeHead(503, { 'retry-after': String(Math.ceil(settled.retryAfterMs / 1_000)) })
          .end();
        return;
      case 422:
        res.writeHead(422, text).end(`${settled.reason}\n`);
        return;
    }
  }

  const listening = await listen(server, options.host, options.port, {
    purpose: 'the CloudEvents sink',
    setting: 'KUBEBUS_HTTP_PORT',
  });
  log.info(
    { host: options.host, port: listening.port, auth: options.auth.mode },
    'CloudEvents HTTP source listening',
  );
  return listening;
}
