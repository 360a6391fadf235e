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
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

/** Results that mean the controller got through with the object. */
const THROUGH = new Set(['success', 'requeue_after']);

/**
 * When the letter's controller got through with its object after the letter,
 * if its latest round says so: its last outcome that did something (a round
 * that did nothing says nothing) is a success after the letter. One that
 * failed again since is the letter's to stand for.
 */
export function reconciledSince(
  letter: Pick<DeadLetter, 'origin' | 'time'>,
  outcomes: readonly OutcomeRecord[],
): string | undefined {
  const latest = outcomes
    .filter((o) => o.controller === letter.origin && o.result !== 'skipped')
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .at(-1);
  return latest !== undefined &&
    THROUGH.has(latest.result) &&
    Date.parse(latest.at) > Date.parse(letter.time)
    ? latest.at
    : undefined;
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
  jsm?: JetStreamManager,
): Promise<string | undefined> {
  const subject = subjects.outcome(letter.origin, letter.key);
  try {
    const manager = jsm ?? (await jetstreamManager(nc));
    const last = await manager.streams.getMessage(Streams.outcomes, { last_by_subj: subject });
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
