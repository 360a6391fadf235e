// The recorded revisions of one object, oldest first: its history in
// KUBEBUS_EVENTS (as many as the stream keeps per object).
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import type { KubeCloudEvent } from '../events/kube-event.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import { RequestTimedOut } from './inbox-requests.js';
import { readOnePass } from './one-pass.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

export interface Revision {
  /** the event's sequence in KUBEBUS_EVENTS */
  readonly seq: number;
  readonly event: KubeCloudEvent;
}

export interface StoredMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly header: MsgHdrs | undefined;
}

/**
 * Every message of `filter` in `stream` (or only the last of each subject),
 * oldest first, in one pass (one-pass.ts); with `deadlineMs`, a pass not done
 * by then fails (transient: NATS did not answer in time).
 */
export async function readMessages(
  nc: NatsConnection,
  stream: string,
  filter: string,
  which: 'all' | 'last-per-subject' = 'all',
  options: { readonly deadlineMs?: number } = {},
): Promise<StoredMessage[]> {
  const messages: StoredMessage[] = [];
  const result = await readOnePass(nc, stream, filter, which, (message) => messages.push(message), {
    ...(options.deadlineMs === undefined
      ? {}
      : { deadlineAt: performance.now() + options.deadlineMs }),
  });
  if (result === 'late')
    throw new RequestTimedOut(
      `reading ${filter} from ${stream}: not done within ${String(options.deadlineMs)} ms`,
    );
  return which === 'all' ? messages : lastOfEach(messages);
}

/**
 * The last message of each subject: a consumer started per subject delivers
 * what is stored while it reads too.
 */
export function lastOfEach(messages: readonly StoredMessage[]): StoredMessage[] {
  const last = new Map<string, StoredMessage>();
  for (const message of messages) {
    const seen = last.get(message.subject);
    if (seen === undefined || seen.seq < message.seq) last.set(message.subject, message);
  }
  return [...last.values()].sort((a, b) => a.seq - b.seq);
}

export async function readRevisions(nc: NatsConnection, key: ObjectKey): Promise<Revision[]> {
  const messages = await readMessages(nc, Streams.events, subjects.event(key));
  return messages.flatMap((message) => {
    const decoded = decodeNatsMessage(message.data, undefined);
    return decoded.ok ? [{ seq: message.seq, event: decoded.event }] : [];
  });
}
