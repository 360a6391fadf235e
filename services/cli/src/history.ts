// `kubebus history`: every recorded revision of one object, oldest first, with
// what changed between revisions and the dead letters recorded for it.
import { DeadLetterSchema, Streams, subjects, type DeadLetter } from '@kubebus/shared/bus';
import { decodeNatsMessage, opOf, type KubeCloudEvent } from '@kubebus/shared/events';
import type { ObjectKey } from '@kubebus/shared/runtime';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { diff, formatChange } from './diff.js';

export interface Revision {
  readonly seq: number;
  readonly event: KubeCloudEvent;
}

/** Every message of one filter subject in `stream`, oldest first. */
async function readAll(nc: NatsConnection, stream: string, filter: string) {
  const jsm = await jetstreamManager(nc);
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: [filter],
    deliver_policy: DeliverPolicy.All,
  });
  const messages: { seq: number; data: Uint8Array }[] = [];
  if ((await consumer.info()).num_pending === 0) return { jsm, messages };
  const iterator = await consumer.consume();
  for await (const message of iterator) {
    messages.push({ seq: message.seq, data: message.data });
    if (message.info.pending === 0) break;
  }
  await iterator.close();
  return { jsm, messages };
}

export async function readHistory(nc: NatsConnection, key: ObjectKey): Promise<Revision[]> {
  const { messages } = await readAll(nc, Streams.events, subjects.event(key));
  return messages.flatMap((message) => {
    const decoded = decodeNatsMessage(message.data, undefined);
    return decoded.ok ? [{ seq: message.seq, event: decoded.event }] : [];
  });
}

export async function readDeadLettersOf(nc: NatsConnection, key: ObjectKey): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  for (const origin of ['watcher', '*']) {
    const filter = `kubebus.dlq.${origin}.${subjects.event(key).split('.').slice(2).join('.')}`;
    const { messages } = await readAll(nc, Streams.deadLetters, filter).catch(() => ({
      messages: [],
    }));
    for (const message of messages) {
      const parsed = DeadLetterSchema.safeParse(JSON.parse(new TextDecoder().decode(message.data)));
      if (parsed.success && !letters.some((l) => l.time === parsed.data.time))
        letters.push(parsed.data);
    }
  }
  return letters;
}

export function formatHistory(
  revisions: readonly Revision[],
  letters: readonly DeadLetter[],
): string {
  const lines: string[] = [];
  let previous: unknown;
  for (const { seq, event } of revisions) {
    const generation = event.kbgeneration === undefined ? '' : ` generation ${event.kbgeneration}`;
    lines.push(
      `#${seq} ${event.time ?? ''} ${opOf(event)} rv ${event.kbrv}${generation} (${event.kbreason})`,
    );
    if (event.kbref === 'apiserver')
      lines.push('    (too large to record; published by reference)');
    else if (previous !== undefined && opOf(event) !== 'delete') {
      for (const change of diff(previous, event.data)) lines.push(`    ${formatChange(change)}`);
    }
    if (event.data !== undefined) previous = event.data;
  }
  for (const letter of letters) {
    lines.push(
      `dead letter ${letter.time} from ${letter.origin} after ${letter.attempts} attempts: ${letter.reason}`,
    );
  }
  return lines.length === 0 ? 'no recorded history\n' : `${lines.join('\n')}\n`;
}
