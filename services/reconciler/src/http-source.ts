// The same reconciler behind Knative: an HTTP CloudEvents sink (binary and
// structured modes) for kubebus' own events and for those of Knative's
// ApiServerSource (Resource and Reference modes). 2xx when reconciled; 503
// (retryable) when it should be retried; 422 (not retried by Knative) for
// terminal errors; 400 for a body that is not a kube CloudEvent; 413 past the
// size limit; 202 for an event of nothing this controller reconciles.
import {
  KubeCloudEventSchema,
  controllerOf,
  keyOfEvent,
  type KubeCloudEvent,
} from '@kubebus/shared/events';
import { listen, type Listening, type Logger } from '@kubebus/shared/obs';
import type { Controller, ObjectKey } from '@kubebus/shared/runtime';
import { objectPath, type KubeClient } from '@kubebus/shared/kube';
import { HTTP } from 'cloudevents';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  keyOfApiServerSourceEvent,
  parseApiServerSourceEvent,
  type ApiServerSourceEvent,
  type KnownResource,
} from './knative-event.js';

export interface HttpSourceOptions {
  readonly host: string;
  readonly port: number;
  readonly maxBytes: number;
  /** the controller's primary resource */
  readonly primary: KnownResource;
  /** every resource it reads (primary, owned, watched): ApiServerSource events name kinds */
  readonly resources: readonly KnownResource[];
  /** reads what an ApiServerSource reference names, to find its owner */
  readonly client: KubeClient;
  /** true, or why not: answered on GET /readyz (Knative probes the serving port) */
  readonly ready: () => true | string;
  /** records an event Knative gave up delivering (POST /dead-letters) in the DLQ */
  readonly deadLetter: (key: ObjectKey, reason: string, traceparent?: string) => Promise<void>;
}

/** Knative's dead-letter extensions: the last answer's status and body (base64). */
interface DeliveryError {
  readonly code?: string;
  readonly data?: string;
}

type Received =
  | { readonly ok: true; readonly kubebus: KubeCloudEvent; readonly error: DeliveryError }
  | { readonly ok: true; readonly knative: ApiServerSourceEvent; readonly error: DeliveryError }
  | { readonly ok: false; readonly reason: string };

type Settled =
  { status: 200 } | { status: 503; retryAfterMs: number } | { status: 422; reason: string };

/** The object to reconcile for an event: the object itself, or its controller owner. */
export function keyFor(
  event: KubeCloudEvent,
  primary: HttpSourceOptions['primary'],
): ObjectKey | undefined {
  if (event.kbgroup === primary.group && event.kbresource === primary.resource)
    return keyOfEvent(event);
  const owner = event.data === undefined ? undefined : controllerOf(event.data);
  const ownerGroup = owner?.apiVersion.includes('/') ? owner.apiVersion.split('/')[0] : '';
  if (owner === undefined || owner.kind !== primary.kind || ownerGroup !== primary.group)
    return undefined;
  return {
    group: primary.group,
    resource: primary.resource,
    namespace: event.namespace ?? '',
    name: owner.name,
  };
}

export async function startHttpSource(
  controller: Controller,
  options: HttpSourceOptions,
  log: Logger,
): Promise<Listening> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error({ err: error }, 'http source failed');
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sink').pathname;
    if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) {
      const ready = path === '/healthz' ? true : options.ready();
      res
        .writeHead(ready === true ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready === true ? 'ok\n' : `${ready}\n`);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const body = await readLimited(req, options.maxBytes);
    if (body === undefined) {
      res.writeHead(413).end(`body exceeds ${options.maxBytes} bytes\n`);
      return;
    }
    const parsed = parseEvent(req, body);
    if (!parsed.ok) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`${parsed.reason}\n`);
      return;
    }
    const { id, traceparent } = 'kubebus' in parsed ? parsed.kubebus : parsed.knative;
    const key =
      'kubebus' in parsed
        ? keyFor(parsed.kubebus, options.primary)
        : await keyOfApiServerSourceEvent(
            parsed.knative,
            options.primary,
            options.resources,
            (resource, namespace, name) =>
              options.client.getIfExists(objectPath(resource, namespace, name)),
          );
    if (key === undefined) {
      res.writeHead(202).end(); // accepted, but nothing of this controller's
      return;
    }
    if (path === '/dead-letters') {
      // Knative's retries are spent: its extensions (binary or structured mode) say what the last answer was
      const { code, data } = parsed.error;
      const detail = data === undefined ? '' : Buffer.from(data, 'base64').toString('utf8');
      await options.deadLetter(
        key,
        `Knative gave up delivering event ${id}: last answer ${code ?? 'unknown'}${detail === '' ? '' : ` ${detail.slice(0, 500)}`}`,
        traceparent,
      );
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
        res.writeHead(422, { 'content-type': 'text/plain' }).end(`${settled.reason}\n`);
        return;
    }
  }

  const listening = await listen(server, options.host, options.port);
  log.info({ port: listening.port }, 'CloudEvents HTTP source listening');
  return listening;
}

function parseEvent(req: IncomingMessage, body: string): Received {
  try {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers[name.toLowerCase()] = value;
    }
    const received = HTTP.toEvent<unknown>({ headers, body });
    if (Array.isArray(received)) return { ok: false, reason: 'batched events are not accepted' };
    const attributes: Record<string, unknown> = { ...received };
    const parsed = KubeCloudEventSchema.safeParse(attributes);
    const code = attributes['knativeerrorcode'];
    const data = attributes['knativeerrordata'];
    const error: DeliveryError = {
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof data === 'string' ? { data } : {}),
    };
    if (parsed.success) return { ok: true, kubebus: parsed.data, error };
    // not kubebus' own (no kb* extensions): Knative's ApiServerSource, or nothing known
    const knative = parseApiServerSourceEvent(attributes);
    if (knative?.ok === true) return { ok: true, knative: knative.event, error };
    return {
      ok: false,
      reason:
        knative?.reason ??
        `not a kube CloudEvent: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    };
  } catch (error) {
    return { ok: false, reason: `not a CloudEvent: ${(error as Error).message}` };
  }
}

async function readLimited(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
