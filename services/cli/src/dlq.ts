// `kubebus dlq`: list, inspect and re-drive what could not be processed.
import {
  Buckets,
  DeadLetterSchema,
  Streams,
  agreementKeys,
  partitionOf,
  encodeToken,
  encodeWorkMark,
  readMessages,
  subjects,
  type DeadLetter,
} from '@kubebus/shared/bus';
import { formatKey, validateObjectKey } from '@kubebus/shared/kube';
import { Kvm } from '@nats-io/kv';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { printable as printableLine } from './terminal-safe.js';

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
  if (message === null)
    throw new Error(`no dead letter #${seq}; kubebus dlq list shows the letters there are`);
  return {
    seq,
    letter: DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data))),
  };
}

/**
 * Sends a dead letter back where it came from — a work mark for a controller,
 * the intent for the status writer — and removes it from the DLQ once stored.
 */
/** The partitions the controllers agreed on (work.<controller>, status), from the agreements bucket. */
async function agreedPartitions(nc: NatsConnection, key: string): Promise<number | undefined> {
  const entry = await (await new Kvm(nc).open(Buckets.agreements)).get(key);
  if (entry === null || entry.operation !== 'PUT') return undefined;
  const partitions = entry.json<{ partitions?: unknown }>().partitions;
  return typeof partitions === 'number' && Number.isInteger(partitions) && partitions > 0
    ? partitions
    : undefined;
}

/**
 * Where a letter goes back to, recomputed from its key and origin: never the
 * subject the letter says, which anyone who could write a dead letter chose.
 */
export async function redriveSubject(nc: NatsConnection, letter: DeadLetter): Promise<string> {
  const checked = validateObjectKey(letter.key);
  if (!checked.ok) throw new Error(`${checked.reason}; this letter cannot be re-driven`);
  const stored = letter.subject ?? '';
  if (stored.startsWith('kubebus.status.')) {
    const partitions = await agreedPartitions(nc, agreementKeys.status);
    if (partitions === undefined)
      throw new Error('no status writer has registered its partitions yet');
    return subjects.status(partitionOf(letter.key, partitions), letter.key);
  }
  if (stored.startsWith('kubebus.events.')) return subjects.event(letter.key);
  // a controller's work: the controller is the letter's origin
  const partitions = await agreedPartitions(nc, agreementKeys.work(letter.origin));
  if (partitions === undefined)
    throw new Error(
      `no controller named ${JSON.stringify(letter.origin)} has registered its partitions`,
    );
  return subjects.work(letter.origin, partitionOf(letter.key, partitions), letter.key);
}

export async function redrive(nc: NatsConnection, seq: number): Promise<string> {
  const { letter } = await inspectDeadLetter(nc, seq);
  if (letter.subject === undefined) {
    throw new Error(
      `#${seq} (${letter.origin}) names no subject to go back to; the next resync re-marks the object`,
    );
  }
  const subject = await redriveSubject(nc, letter);
  const headers = natsHeaders();
  headers.set('content-type', 'application/json');
  if (letter.traceparent !== undefined) headers.set('traceparent', letter.traceparent);
  const payload = subject.startsWith('kubebus.work.')
    ? encodeWorkMark({
        key: letter.key,
        reason: 'redrive',
        ...(letter.eventId === undefined ? {} : { eventId: letter.eventId }),
        ...(letter.traceparent === undefined ? {} : { traceparent: letter.traceparent }),
        time: new Date().toISOString(),
      })
    : Buffer.from(letter.payload ?? '', 'base64');
  await jetstream(nc).publish(subject, payload, { headers });
  await (await jetstreamManager(nc)).streams.deleteMessage(Streams.deadLetters, seq);
  return `re-drove #${seq} ${formatKey(letter.key)} to ${subject}`;
}

export function formatLetter({ seq, letter }: StoredLetter): string {
  return `#${seq} ${printable(letter.time, 40)} ${printable(letter.origin, 80)} ${printable(formatKey(letter.key), 300)} (${printable(letter.code, 60)}, ${letter.attempts} attempts): ${printable(letter.reason, 300)}`;
}

/**
 * One terminal-safe line (terminal-safe.ts): a letter's fields come from the
 * bus (a malformed message's bytes, a multi-line zod report), so control and
 * bidi characters are escaped, whitespace runs folded, and the rest cut at
 * `max` characters.
 */
export function printable(text: string, max: number): string {
  return printableLine(text, max);
}
