// `kubebus dlq`: list, inspect and re-drive what could not be processed.
import {
  Buckets,
  DeadLetterSchema,
  ROLE_ORIGINS,
  Streams,
  originOf,
  agreementKeys,
  decodeToken,
  partitionOf,
  encodeToken,
  encodeWorkMark,
  readMessages,
  subjects,
  type DeadLetter,
} from '@kubebus/shared/bus';
import { decodeNatsMessage, keyOfEvent } from '@kubebus/shared/events';
import { formatKey, validateObjectKey, type ObjectKey } from '@kubebus/shared/kube';
import { Kvm } from '@nats-io/kv';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { printable as printableLine } from './terminal-safe.js';

export interface StoredLetter {
  readonly seq: number;
  readonly letter: DeadLetter;
  /** the subject it was stored on (kubebus.dlq.<origin>.…): NATS let only its origin publish there */
  readonly storedOn?: string;
  /** when its controller last got through with the object after it (letter-recovery.ts), if it has */
  readonly reconciledSince?: string;
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
    storedOn: message.subject,
  };
}

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
    // kubebus.status.<controller>.p<n>.<4 key tokens>; before 0015 there was no controller
    const tokens = stored.split('.');
    if (tokens.length !== 8)
      throw new Error(
        'this letter names a status subject of the layout before per-operator subjects (ADR 0015); the next resync writes the status again',
      );
    const controller = decodeToken(tokens[2] ?? '');
    const partitions = await agreedPartitions(nc, agreementKeys.status(controller));
    if (partitions === undefined)
      throw new Error(`no status writer of ${controller} has registered its partitions yet`);
    return subjects.status(controller, partitionOf(letter.key, partitions), letter.key);
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

/**
 * A letter's body is the word of whoever wrote it; what NATS enforced is the
 * subject it was stored on. The origin must be that subject's, an event goes
 * back only from the watcher and an intent only from the status writer, and
 * what is re-sent must be about the letter's own key.
 */
function checkProvenance(stored: StoredLetter, target: string): void {
  const { letter, storedOn } = stored;
  const origin = storedOn?.split('.')[2];
  if (origin === undefined || decodeToken(origin) !== letter.origin)
    throw new Error(
      `#${stored.seq} says it comes from ${JSON.stringify(letter.origin)} but was stored on ${storedOn ?? 'no subject'}: not re-driven`,
    );
  const needed = target.startsWith('kubebus.events.')
    ? ROLE_ORIGINS.watcher
    : target.startsWith('kubebus.status.')
      ? ROLE_ORIGINS.statusWriter
      : undefined;
  const from = originOf(letter.origin);
  if (needed !== undefined && from.role !== needed)
    throw new Error(
      `#${stored.seq}: only the ${needed} re-sends to ${target.split('.', 2).join('.')}: not re-driven`,
    );
  if (needed === undefined) return;
  // a status writer re-sends only its own operator's status (the shared origin before ADR 0015's end: any)
  const into = decodeToken(target.split('.')[2] ?? '');
  if (needed === ROLE_ORIGINS.statusWriter && from.operator !== undefined && from.operator !== into)
    throw new Error(
      `#${stored.seq}: the status writer of ${from.operator} does not write ${into}'s status: not re-driven`,
    );
  const payload = Buffer.from(letter.payload ?? '', 'base64');
  const key =
    needed === 'watcher'
      ? (() => {
          const decoded = decodeNatsMessage(payload, undefined);
          return decoded.ok ? keyOfEvent(decoded.event) : undefined;
        })()
      : (() => {
          try {
            return (JSON.parse(payload.toString('utf8')) as { key?: ObjectKey }).key;
          } catch {
            return undefined;
          }
        })();
  if (key === undefined || formatKey(key) !== formatKey(letter.key))
    throw new Error(
      `#${stored.seq}: what it would re-send is not about ${formatKey(letter.key)}: not re-driven`,
    );
}

/**
 * Sends a dead letter back where it came from — a work mark for a controller,
 * the intent for the status writer — and removes it from the DLQ once stored.
 */
export async function redrive(nc: NatsConnection, seq: number): Promise<string> {
  const stored = await inspectDeadLetter(nc, seq);
  const { letter } = stored;
  if (letter.subject === undefined) {
    throw new Error(
      `#${seq} (${letter.origin}) names no subject to go back to; the next resync re-marks the object`,
    );
  }
  const subject = await redriveSubject(nc, letter);
  checkProvenance(stored, subject);
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

export function formatLetter({ seq, letter, reconciledSince }: StoredLetter): string {
  const line = `#${seq} ${printable(letter.time, 40)} ${printable(letter.origin, 80)} ${printable(formatKey(letter.key), 300)} (${printable(letter.code, 60)}, ${letter.attempts} attempts): ${printable(letter.reason, 300)}`;
  return reconciledSince === undefined
    ? line
    : `${line} [reconciled since ${printable(reconciledSince, 40)}: nothing to re-drive]`;
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
