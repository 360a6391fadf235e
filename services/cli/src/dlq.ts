// `kubebus dlq`: list, inspect and re-drive what could not be processed.
import {
  DeadLetterSchema,
  Streams,
  encodeToken,
  encodeWorkMark,
  readMessages,
  subjects,
  type DeadLetter,
} from '@kubebus/shared/bus';
import { formatKey } from '@kubebus/shared/kube';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';

export interface StoredLetter {
  readonly seq: number;
  readonly letter: DeadLetter;
}

export interface LetterFilter {
  /** the component that parked it (a controller, the watcher, the status writer) */
  readonly origin?: string;
  /** its error code, e.g. KUBEBUS_KUBE_API */
  readonly code?: string;
  /** parked at or after this time */
  readonly since?: Date;
  /** letters after this sequence only (paging) */
  readonly after?: number;
  /** at most this many */
  readonly limit?: number;
}

/** The dead letters that match, oldest first, read in one pass over the DLQ. */
export async function listDeadLetters(
  nc: NatsConnection,
  filter: LetterFilter = {},
): Promise<StoredLetter[]> {
  const subject =
    filter.origin === undefined
      ? subjects.allDeadLetters
      : `kubebus.dlq.${encodeToken(filter.origin)}.>`;
  const messages = await readMessages(nc, Streams.deadLetters, subject);
  const out: StoredLetter[] = [];
  for (const message of messages) {
    if (filter.after !== undefined && message.seq <= filter.after) continue;
    let letter: DeadLetter;
    try {
      letter = DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data)));
    } catch {
      continue; // not a letter (hand-published): inspect shows it
    }
    if (filter.code !== undefined && letter.code !== filter.code) continue;
    if (filter.since !== undefined && Date.parse(letter.time) < filter.since.getTime()) continue;
    out.push({ seq: message.seq, letter });
    if (filter.limit !== undefined && out.length >= filter.limit) break;
  }
  return out;
}

export async function inspectDeadLetter(nc: NatsConnection, seq: number): Promise<StoredLetter> {
  const jsm = await jetstreamManager(nc);
  const message = await jsm.streams.getMessage(Streams.deadLetters, { seq });
  if (message === null) throw new Error(`no dead letter #${seq}`);
  return {
    seq,
    letter: DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data))),
  };
}

/**
 * Sends a dead letter back where it came from — a work mark for a controller,
 * the intent for the status writer — and removes it from the DLQ once stored.
 */
export async function redrive(nc: NatsConnection, seq: number): Promise<string> {
  const { letter } = await inspectDeadLetter(nc, seq);
  if (letter.subject === undefined) {
    throw new Error(
      `#${seq} (${letter.origin}) names no subject to go back to; the next resync re-marks the object`,
    );
  }
  const headers = natsHeaders();
  headers.set('content-type', 'application/json');
  if (letter.traceparent !== undefined) headers.set('traceparent', letter.traceparent);
  const payload = letter.subject.startsWith('kubebus.work.')
    ? encodeWorkMark({
        key: letter.key,
        reason: 'redrive',
        ...(letter.eventId === undefined ? {} : { eventId: letter.eventId }),
        ...(letter.traceparent === undefined ? {} : { traceparent: letter.traceparent }),
        time: new Date().toISOString(),
      })
    : Buffer.from(letter.payload ?? '', 'base64');
  await jetstream(nc).publish(letter.subject, payload, { headers });
  await (await jetstreamManager(nc)).streams.deleteMessage(Streams.deadLetters, seq);
  return `re-drove #${seq} ${formatKey(letter.key)} to ${letter.subject}`;
}

export function formatLetter({ seq, letter }: StoredLetter): string {
  return `#${seq} ${letter.time} ${letter.origin} ${printable(formatKey(letter.key), 300)} (${printable(letter.code, 60)}, ${letter.attempts} attempts): ${printable(letter.reason, 300)}`;
}

/**
 * One terminal-safe line: a letter's fields come from the bus (a malformed
 * message's bytes, a multi-line zod report), so control characters are
 * escaped, whitespace runs folded, and the rest cut at `max` characters.
 */
export function printable(text: string, max: number): string {
  const line = text
    .replace(/\s+/g, ' ')
    .replace(
      // eslint-disable-next-line no-control-regex -- control characters are what is being removed
      /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
