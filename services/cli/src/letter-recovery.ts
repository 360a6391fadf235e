// Whether a dead letter still stands: a letter is a fact about one attempt,
// kept for the record, but its controller may have reconciled the object
// since (its spec changed, a new version's sweep), and a re-drive would only
// repeat that. `kubebus status` and `kubebus dlq list` both say so.
import {
  OutcomeRecordSchema,
  Streams,
  readMessages,
  subjects,
  type DeadLetter,
  type OutcomeRecord,
} from '@kubebus/shared/bus';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

/** Results that mean the controller got through with the object. */
const THROUGH = new Set(['success', 'requeue_after']);

/** When the letter's controller last got through with its object after the letter, if it has. */
export function reconciledSince(
  letter: Pick<DeadLetter, 'origin' | 'time'>,
  outcomes: readonly OutcomeRecord[],
): string | undefined {
  const parked = Date.parse(letter.time);
  return outcomes
    .filter(
      (o) => o.controller === letter.origin && THROUGH.has(o.result) && Date.parse(o.at) > parked,
    )
    .map((o) => o.at)
    .sort()
    .at(-1);
}

/**
 * reconciledSince, read off the bus for one letter: its controller's last
 * record of the object (one direct get), and only when that one did nothing
 * ("skipped") all of them. Undefined when the records cannot be read: the
 * letter is then shown as it stands.
 */
export async function readReconciledSince(
  nc: NatsConnection,
  letter: DeadLetter,
): Promise<string | undefined> {
  const subject = subjects.outcome(letter.origin, letter.key);
  try {
    const jsm = await jetstreamManager(nc);
    const last = await jsm.streams.getMessage(Streams.outcomes, { last_by_subj: subject });
    if (last === null) return undefined;
    const record = recordOf(last.data);
    if (record === undefined) return undefined;
    if (record.result !== 'skipped') return reconciledSince(letter, [record]);
    const all = await readMessages(nc, Streams.outcomes, subject);
    return reconciledSince(
      letter,
      all.flatMap((message) => recordOf(message.data) ?? []),
    );
  } catch {
    return undefined;
  }
}

function recordOf(data: Uint8Array): OutcomeRecord | undefined {
  try {
    const parsed = OutcomeRecordSchema.safeParse(JSON.parse(new TextDecoder().decode(data)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
