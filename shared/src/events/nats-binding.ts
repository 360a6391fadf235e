// The CloudEvents NATS binding: structured content mode (the JSON event format as
// the payload) for what kubebus publishes; binary mode (attributes in `ce-*`
// headers, data as the payload) is accepted too. The `cloudevents` package has no
// NATS binding, so this is the one place that maps events to NATS messages.
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import { KubeCloudEventSchema, type KubeCloudEvent } from './kube-event.js';

export const STRUCTURED_CONTENT_TYPE = 'application/cloudevents+json';
const BINARY_PREFIX = 'ce-';
/** The largest message kubebus parses; anything larger is refused, not buffered. */
export const DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** The headers of a NATS message, as nats.js `MsgHdrs` offers them. */
export interface HeaderReader {
  keys(): string[];
  get(key: string): string;
}

export interface NatsMessageParts {
  readonly payload: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeStructured(event: KubeCloudEvent): NatsMessageParts {
  return {
    payload: encoder.encode(JSON.stringify(event)),
    headers: { 'content-type': STRUCTURED_CONTENT_TYPE },
  };
}

export function encodeBinary(event: KubeCloudEvent): NatsMessageParts {
  const { data, datacontenttype, ...attributes } = event;
  const headers: Record<string, string> = {
    'content-type': datacontenttype ?? 'application/json',
  };
  for (const [name, value] of Object.entries(attributes)) {
    headers[BINARY_PREFIX + name] = String(value);
  }
  return {
    payload: data === undefined ? new Uint8Array() : encoder.encode(JSON.stringify(data)),
    headers,
  };
}

export type DecodeResult =
  | { readonly ok: true; readonly event: KubeCloudEvent }
  | { readonly ok: false; readonly error: KubebusError };

/** Parses a NATS message into a kube CloudEvent; failure is data, with a reason. */
export function decodeNatsMessage(
  payload: Uint8Array,
  headers: HeaderReader | undefined,
  maxBytes = DEFAULT_MAX_EVENT_BYTES,
): DecodeResult {
  if (payload.byteLength > maxBytes) {
    return failure(
      ErrorCodes.MessageTooLarge,
      `message of ${payload.byteLength} bytes exceeds ${maxBytes}`,
    );
  }
  const lowered = new Map<string, string>();
  for (const key of headers?.keys() ?? []) lowered.set(key.toLowerCase(), headers?.get(key) ?? '');
  try {
    const candidate = lowered.has(`${BINARY_PREFIX}specversion`)
      ? binaryCandidate(payload, lowered)
      : (JSON.parse(decoder.decode(payload)) as unknown);
    const parsed = KubeCloudEventSchema.safeParse(candidate);
    if (parsed.success) return { ok: true, event: parsed.data };
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    return failure(ErrorCodes.MalformedMessage, `not a kubebus CloudEvent: ${issues}`);
  } catch (error) {
    return failure(
      ErrorCodes.MalformedMessage,
      `unreadable message: ${(error as Error).message}`,
      error,
    );
  }
}

function binaryCandidate(
  payload: Uint8Array,
  headers: Map<string, string>,
): Record<string, unknown> {
  const candidate: Record<string, unknown> = {};
  for (const [key, value] of headers) {
    if (key.startsWith(BINARY_PREFIX)) candidate[key.slice(BINARY_PREFIX.length)] = value;
  }
  const contentType = headers.get('content-type');
  if (contentType !== undefined) candidate['datacontenttype'] = contentType;
  if (payload.byteLength > 0) candidate['data'] = JSON.parse(decoder.decode(payload)) as unknown;
  return candidate;
}

function failure(code: KubebusError['code'], message: string, cause?: unknown): DecodeResult {
  return { ok: false, error: new KubebusError(code, message, { cause }) };
}
