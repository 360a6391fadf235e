// A request to the CloudEvents sink, read and parsed at the edge: a bounded
// body, the attributes CloudEvents 1.0 requires (id, source, type,
// specversion) present as sent — the SDK would invent a missing id — and then
// a kubebus event or one of Knative's ApiServerSource. Failure is data, with
// the reason a 400 carries.
import { KubeCloudEventSchema, type KubeCloudEvent } from '@kubebus/shared/events';
import type { IncomingMessage } from 'node:http';
import { parseApiServerSourceEvent, type ApiServerSourceEvent } from './knative-event.js';

/** Knative's dead-letter extensions: the last answer's status and body (base64). */
export interface DeliveryError {
  readonly code?: string;
  readonly data?: string;
}

export type Received =
  | { readonly ok: true; readonly kubebus: KubeCloudEvent; readonly error: DeliveryError }
  | { readonly ok: true; readonly knative: ApiServerSourceEvent; readonly error: DeliveryError }
  | { readonly ok: false; readonly reason: string };

/** Longest event id taken: it becomes a dead letter's Nats-Msg-Id (UUIDs are 36). */
export const MAX_EVENT_ID_CHARS = 256;

const REQUIRED = ['id', 'source', 'type', 'specversion'] as const;

/** The body, or undefined past `maxBytes` (declared or sent). */
export async function readLimited(
  req: IncomingMessage,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** Why the request is not a CloudEvent 1.0 with its required attributes, or undefined. */
function requiredProblem(headers: Record<string, string>, body: string): string | undefined {
  const contentType = headers['content-type'] ?? '';
  let attributes: Record<string, unknown>;
  if ('ce-specversion' in headers) {
    attributes = {};
    for (const name of REQUIRED) attributes[name] = headers[`ce-${name}`];
  } else if (/^application\/cloudevents-batch\+json/i.test(contentType)) {
    return 'batched events are not accepted';
  } else if (/^application\/cloudevents\+json/i.test(contentType)) {
    try {
      const parsed = JSON.parse(body) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return 'not a CloudEvent: the body is not a JSON object';
      attributes = parsed as Record<string, unknown>;
    } catch (error) {
      return `not a CloudEvent: ${(error as Error).message}`;
    }
  } else {
    return 'not a CloudEvent: no ce-specversion header (binary mode) and not application/cloudevents+json (structured mode)';
  }
  const missing = REQUIRED.filter((name) => {
    const value = attributes[name];
    return typeof value !== 'string' || value === '';
  });
  if (missing.length > 0)
    return `not a CloudEvent: the required attribute${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing`;
  if (attributes['specversion'] !== '1.0')
    return `specversion ${JSON.stringify(attributes['specversion'])} is not supported (1.0 is)`;
  if ((attributes['id'] as string).length > MAX_EVENT_ID_CHARS)
    return `the event id is longer than ${MAX_EVENT_ID_CHARS} characters`;
  return undefined;
}

export type EventParser = (req: IncomingMessage, raw: Buffer) => Received;

/**
 * The parser, with the CloudEvents SDK loaded when it is first wanted: only
 * the HTTP source (Knative) needs it, so no other process loads it.
 */
export async function loadEventParser(): Promise<EventParser> {
  const { HTTP } = await import('cloudevents');
  return (req, raw) => parseEvent(HTTP, req, raw);
}

type CloudEventsHttp = (typeof import('cloudevents'))['HTTP'];

function parseEvent(HTTP: CloudEventsHttp, req: IncomingMessage, raw: Buffer): Received {
  const headers = headersOf(req);
  const body = raw.toString('utf8');
  const problem = requiredProblem(headers, body);
  if (problem !== undefined) return { ok: false, reason: problem };
  try {
    const received = HTTP.toEvent<unknown>({ headers, body });
    if (Array.isArray(received)) return { ok: false, reason: 'batched events are not accepted' };
    const attributes: Record<string, unknown> = { ...received };
    const parsed = KubeCloudEventSchema.safeParse(attributes);
    const code = attributes['knativeerrorcode'];
    const data = attributes['knativeerrordata'];
    const error: DeliveryError = {
      // an HTTP status, or nothing: it goes into a dead letter's reason
      ...(typeof code === 'string' && /^\d{3}$/.test(code) ? { code } : {}),
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
        `not a kube CloudEvent: ${parsed.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.join('.')}: ${i.message}`)
          .join('; ')}`,
    };
  } catch (error) {
    return { ok: false, reason: `not a CloudEvent: ${(error as Error).message}` };
  }
}
