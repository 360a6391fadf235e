// The same reconciler behind Knative: an HTTP CloudEvents sink (binary and
// structured modes). 2xx when reconciled; 503 (retryable) when it should be
// retried; 422 (not retried by Knative) for terminal errors; 400 for a body
// that is not a kube CloudEvent; 413 past the size limit.
import {
  KubeCloudEventSchema,
  controllerOf,
  keyOfEvent,
  type KubeCloudEvent,
} from '@kubebus/shared/events';
import { listen, type Listening, type Logger } from '@kubebus/shared/obs';
import type { Controller, ObjectKey } from '@kubebus/shared/runtime';
import { HTTP } from 'cloudevents';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface HttpSourceOptions {
  readonly host: string;
  readonly port: number;
  readonly maxBytes: number;
  /** the controller's primary resource */
  readonly primary: { readonly group: string; readonly resource: string; readonly kind: string };
}

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
    const key = keyFor(parsed.event, options.primary);
    if (key === undefined) {
      res.writeHead(202).end(); // accepted, but nothing of this controller's
      return;
    }
    const settled = await new Promise<Settled>((resolve) => {
      controller.dispatch({
        key,
        enqueuedAt: Date.now(),
        eventId: parsed.event.id,
        ...(parsed.event.traceparent === undefined
          ? {}
          : { traceparent: parsed.event.traceparent }),
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

function parseEvent(
  req: IncomingMessage,
  body: string,
): { ok: true; event: KubeCloudEvent } | { ok: false; reason: string } {
  try {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers[name.toLowerCase()] = value;
    }
    const received = HTTP.toEvent<unknown>({ headers, body });
    if (Array.isArray(received)) return { ok: false, reason: 'batched events are not accepted' };
    const attributes: Record<string, unknown> = { ...received };
    const parsed = KubeCloudEventSchema.safeParse(attributes);
    if (!parsed.success) {
      return {
        ok: false,
        reason: `not a kube CloudEvent: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      };
    }
    return { ok: true, event: parsed.data };
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
