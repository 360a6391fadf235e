// A dead letter: what could not be processed, why, and where it came from, so
// `kubebus dlq` can show it and re-drive it. A letter is bounded: its reason is
// cut at MAX_REASON_CHARS and its payload at 64 KiB, so it fits KUBEBUS_DLQ's
// max_msg_size (topology-limits.ts); its key may be one no object can have
// (that is often why it is a letter), so it is shown, never trusted.
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { z } from 'zod';
import { redactCredentials } from '../errors/public-text.js';
import { validateObjectKey } from '../kube/names.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { keyOfSubject, subjects } from './subjects.js';

/** A reason longer than this is cut (with a note of how long it was). */
export const MAX_REASON_CHARS = 4096;
/** The most of a malformed message's payload a letter keeps. */
const MAX_KEPT_PAYLOAD = 64 * 1024;

export const DeadLetterSchema = z.object({
  /** which component parked it: watcher, reconciler, status-writer */
  origin: z.string(),
  key: z.object({
    group: z.string(),
    resource: z.string(),
    namespace: z.string(),
    name: z.string(),
  }),
  reason: z.string(),
  /** the stable error code (docs/errors.md) */
  code: z.string(),
  /** where the message came from and should go back to on re-drive */
  subject: z.string().optional(),
  eventId: z.string().optional(),
  attempts: z.number().int().nonnegative(),
  time: z.string(),
  traceparent: z.string().optional(),
  /** the original payload, base64, when it is safe and small enough to keep */
  payload: z.string().optional(),
});

export type DeadLetter = z.infer<typeof DeadLetterSchema>;

export function deadLetter(
  fields: Omit<DeadLetter, 'time' | 'key'> & { key: ObjectKey; time?: Date },
): DeadLetter {
  const { time, key, ...rest } = fields;
  // every role and `kubebus dlq` reads letters: an error's quoted URL keeps no credentials
  const reason = redactCredentials(fields.reason);
  return {
    ...rest,
    key: { ...key },
    reason:
      reason.length <= MAX_REASON_CHARS
        ? reason
        : `${reason.slice(0, MAX_REASON_CHARS)}… (${reason.length} characters)`,
    time: (time ?? new Date()).toISOString(),
  };
}

/** Parks a dead letter in KUBEBUS_DLQ; throws when JetStream does not store it. */
export async function publishDeadLetter(
  js: JetStreamClient,
  record: DeadLetter,
  msgId?: string,
): Promise<number> {
  const subject = subjects.deadLetter(record.origin, record.key);
  const headers = natsHeaders();
  headers.set('content-type', 'application/json');
  if (record.traceparent !== undefined) headers.set('traceparent', record.traceparent);
  // its sequence: what `kubebus dlq redrive <seq>` names it by
  const ack = await js.publish(subject, JSON.stringify(record), {
    headers,
    ...(msgId ? { msgID: msgId } : {}),
  });
  return ack.seq;
}

/** Parks a message that is not a valid request, with the reason and (up to 64 KiB of) its payload. */
export async function parkMalformed(
  js: JetStreamClient,
  origin: string,
  message: { readonly subject: string; readonly data: Uint8Array },
  reason: string,
): Promise<void> {
  let key: ObjectKey = { group: '', resource: 'unknown', namespace: '', name: 'unknown' };
  try {
    const named = keyOfSubject(message.subject);
    // a key no object can have stays in the reason, not in the letter's subject
    if (validateObjectKey(named).ok) key = named;
  } catch {
    // the subject names no object either
  }
  await publishDeadLetter(
    js,
    deadLetter({
      origin,
      key,
      reason,
      code: 'KUBEBUS_MALFORMED_MESSAGE',
      subject: message.subject,
      attempts: 1,
      payload: Buffer.from(message.data.subarray(0, MAX_KEPT_PAYLOAD)).toString('base64'),
    }),
  );
}
