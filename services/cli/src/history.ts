// `kubebus history`: every recorded revision of one object, oldest first, with
// what changed between revisions and the dead letters recorded for it.
import {
  DeadLetterSchema,
  Streams,
  readMessages,
  subjects,
  type DeadLetter,
  type Revision,
} from '@kubebus/shared/bus';
import { opOf } from '@kubebus/shared/events';
import type { ObjectKey } from '@kubebus/shared/runtime';
import type { NatsConnection } from '@nats-io/nats-core';
import { diff, formatChange } from '@kubebus/shared/kube';

export async function readDeadLettersOf(nc: NatsConnection, key: ObjectKey): Promise<DeadLetter[]> {
  // kubebus.dlq.<origin>.<the object's key tokens>, from any origin
  const filter = `kubebus.dlq.*.${subjects.event(key).split('.').slice(2).join('.')}`;
  const messages = await readMessages(nc, Streams.deadLetters, filter).catch(() => []);
  return messages.flatMap((message) => {
    const parsed = DeadLetterSchema.safeParse(JSON.parse(new TextDecoder().decode(message.data)));
    return parsed.success ? [parsed.data] : [];
  });
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
