// `kubebus history`: every recorded revision of one object, oldest first, with
// what changed between revisions, what each controller did after each one
// (the recorded outcomes), and the dead letters recorded for it.
import {
  DeadLetterSchema,
  Streams,
  readMessages,
  subjects,
  type DeadLetter,
  type OutcomeRecord,
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

/** One outcome line: which controller, what came of it, how long, the trace to look up. */
export function formatOutcome(outcome: OutcomeRecord): string {
  const traceId = outcome.traceparent.split('-')[1] ?? outcome.traceparent;
  const attempt = outcome.attempt > 1 ? ` (attempt ${outcome.attempt})` : '';
  const why = outcome.error ?? outcome.note;
  const error = why === undefined ? '' : `: ${why.split('\n')[0] ?? ''}`;
  return `    → ${outcome.controller} ${outcome.result} in ${outcome.ms} ms${attempt}${error} trace ${traceId}`;
}

export function formatHistory(
  revisions: readonly Revision[],
  letters: readonly DeadLetter[],
  outcomes: readonly OutcomeRecord[] = [],
): string {
  const lines: string[] = [];
  let previous: unknown;
  // each revision is followed by what the controllers did until the next one
  const pending = [...outcomes];
  const outcomesUntil = (time: string | undefined) => {
    while (pending.length > 0 && (time === undefined || (pending[0]?.at ?? '') < time)) {
      const outcome = pending.shift();
      if (outcome !== undefined) lines.push(formatOutcome(outcome));
    }
  };
  for (const [index, { seq, event }] of revisions.entries()) {
    if (index === 0) {
      // outcomes older than the first revision kept (the rest of its history has aged out)
      outcomesUntil(event.time);
    }
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
    outcomesUntil(revisions[index + 1]?.event.time);
  }
  outcomesUntil(undefined);
  for (const letter of letters) {
    lines.push(
      `dead letter ${letter.time} from ${letter.origin} after ${letter.attempts} attempts: ${letter.reason}`,
    );
  }
  return lines.length === 0 ? 'no recorded history\n' : `${lines.join('\n')}\n`;
}
