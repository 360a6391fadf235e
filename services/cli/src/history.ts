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
import { printable, safeText } from './terminal-safe.js';

/** A dead letter with its sequence in KUBEBUS_DLQ: what `kubebus dlq inspect|redrive` take. */
export type NumberedLetter = DeadLetter & { readonly seq: number };

export async function readDeadLettersOf(
  nc: NatsConnection,
  key: ObjectKey,
): Promise<NumberedLetter[]> {
  // kubebus.dlq.<origin>.<the object's key tokens>, from any origin
  const filter = `kubebus.dlq.*.${subjects.event(key).split('.').slice(2).join('.')}`;
  const messages = await readMessages(nc, Streams.deadLetters, filter).catch(() => []);
  // a letter that is not one (any role may publish under kubebus.dlq) is left out, not fatal
  return messages.flatMap((message) => {
    const parsed = DeadLetterSchema.safeParse(parseJsonOrUndefined(message.data));
    return parsed.success ? [{ ...parsed.data, seq: message.seq }] : [];
  });
}

function parseJsonOrUndefined(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}

/** The trace id of a traceparent (the part every span of one change shares). */
const traceIdOf = (traceparent: string) => traceparent.split('-')[1] ?? traceparent;

/** metadata.generation of a recorded object, when it has one. */
function generationOf(object: unknown): number | undefined {
  const metadata = (object as { metadata?: { generation?: unknown } } | undefined)?.metadata;
  return typeof metadata?.generation === 'number' ? metadata.generation : undefined;
}

/** One outcome line: which controller, what came of it, how long, the trace to look up. */
export function formatOutcome(outcome: OutcomeRecord): string {
  const traceId = traceIdOf(outcome.traceparent);
  const attempt = outcome.attempt > 1 ? ` (attempt ${outcome.attempt})` : '';
  const why = outcome.error ?? outcome.note;
  const error = why === undefined ? '' : `: ${printable(why.split('\n')[0])}`;
  const wrote = outcome.wrote === undefined ? '' : `, wrote rv ${outcome.wrote}`;
  const cause =
    outcome.cause === undefined ? '' : ` after a change of ${printable(outcome.cause, 120)}`;
  return `    → ${printable(outcome.controller)} ${printable(outcome.result)}${cause} in ${outcome.ms} ms${attempt}${printable(wrote)}${error} trace ${printable(traceId)}`;
}

/** A run this long of the same failure is one line: an outage retried for an hour is not a page of them. */
const RUN = 3;

/** What makes two outcomes the same line but for their attempt, time and trace. */
const sameAs = (a: OutcomeRecord, b: OutcomeRecord) =>
  a.controller === b.controller &&
  a.result === b.result &&
  a.result !== 'success' &&
  a.cause === b.cause &&
  a.wrote === undefined &&
  b.wrote === undefined &&
  (a.error ?? a.note ?? '').split('\n')[0] === (b.error ?? b.note ?? '').split('\n')[0];

/** The outcomes' lines, a run of the same failure (retries of one outage) as one. */
export function formatOutcomes(outcomes: readonly OutcomeRecord[]): string[] {
  const lines: string[] = [];
  for (let start = 0; start < outcomes.length;) {
    const first = outcomes[start] as OutcomeRecord;
    let end = start + 1;
    while (end < outcomes.length && sameAs(first, outcomes[end] as OutcomeRecord)) end++;
    if (end - start < RUN) {
      for (const outcome of outcomes.slice(start, end)) lines.push(formatOutcome(outcome));
    } else {
      const run = outcomes.slice(start, end);
      const last = run.at(-1) as OutcomeRecord;
      const ms = run.map((outcome) => outcome.ms);
      const why = first.error ?? first.note;
      lines.push(
        `    → ${printable(first.controller)} ${printable(first.result)} ×${String(run.length)} (attempts ${String(first.attempt)}–${String(last.attempt)}, ${printable(first.at)} to ${printable(last.at)}, ${String(Math.min(...ms))}–${String(Math.max(...ms))} ms)${why === undefined ? '' : `: ${printable(why.split('\n')[0])}`} traces ${printable(traceIdOf(first.traceparent))} … ${printable(traceIdOf(last.traceparent))}`,
      );
    }
    start = end;
  }
  return lines;
}

/**
 * Which revision each outcome belongs to. A reconcile names the event that
 * caused it: the revision of that event, or (an event of another object, an
 * owned one) the last revision recorded before it. A status write names no
 * event: the revision its reconcile was placed at (the same trace), else the
 * last one before it. -1: before the first revision still kept.
 */
export function placeOutcomes(
  revisions: readonly Revision[],
  outcomes: readonly OutcomeRecord[],
): number[] {
  const byEvent = new Map(revisions.map(({ event }, index) => [event.id, index]));
  const byTime = (at: string) => {
    let last = -1;
    for (const [index, { event }] of revisions.entries())
      if ((event.time ?? '') <= at) last = index;
    return last;
  };
  const byTrace = new Map<string, number>();
  const placed: number[] = outcomes.map(() => -1);
  // reconciles first: their places are what the status writes join by trace
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome.eventId === undefined) continue;
    placed[i] = byEvent.get(outcome.eventId) ?? byTime(outcome.at);
    const trace = traceIdOf(outcome.traceparent);
    if (!byTrace.has(trace)) byTrace.set(trace, placed[i]);
  }
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome.eventId !== undefined) continue;
    placed[i] = byTrace.get(traceIdOf(outcome.traceparent)) ?? byTime(outcome.at);
  }
  return placed;
}

function apiVersionOf(object: unknown): string | undefined {
  const apiVersion = (object as { apiVersion?: unknown } | undefined)?.apiVersion;
  return typeof apiVersion === 'string' ? apiVersion : undefined;
}

export function formatHistory(
  revisions: readonly Revision[],
  letters: readonly NumberedLetter[],
  outcomes: readonly OutcomeRecord[] = [],
): string {
  const lines: string[] = [];
  const placement = placeOutcomes(revisions, outcomes);
  const outcomesOf = (index: number) =>
    formatOutcomes(outcomes.filter((_, i) => placement[i] === index));
  const writers = new Map(
    outcomes.flatMap((outcome) => (outcome.wrote === undefined ? [] : [[outcome.wrote, outcome]])),
  );
  // outcomes older than the first revision kept (the rest of its history has aged out)
  lines.push(...outcomesOf(-1));
  let previous: unknown;
  let life: string | undefined;
  for (const [index, { seq, event }] of revisions.entries()) {
    const generation = event.kbgeneration === undefined ? '' : ` generation ${event.kbgeneration}`;
    // a name deleted and made again is another object: said, and not diffed against the earlier one
    if (life !== undefined && event.kbuid !== life) {
      lines.push(`— another object of this name from here: uid ${printable(event.kbuid)}`);
      previous = undefined;
    }
    life = event.kbuid;
    lines.push(
      `#${seq} ${printable(event.time)} ${opOf(event)} rv ${printable(event.kbrv)}${generation} (${event.kbreason})`,
    );
    // another release's watcher records another version: its fields are not the earlier ones changed
    const was = apiVersionOf(previous);
    const now = apiVersionOf(event.data);
    if (was !== undefined && now !== undefined && was !== now) {
      lines.push(
        `    recorded as ${printable(now)} from here (was ${printable(was)}): not compared across versions`,
      );
      previous = undefined;
    }
    const writer = writers.get(event.kbrv);
    if (writer !== undefined)
      lines.push(
        `    written by ${printable(writer.controller)}, trace ${printable(traceIdOf(writer.traceparent))}`,
      );
    if (event.kbref === 'apiserver')
      lines.push('    (too large to record; published by reference)');
    else if (previous !== undefined && opOf(event) !== 'delete') {
      const changes = diff(previous, event.data);
      for (const change of changes) lines.push(`    ${printable(formatChange(change))}`);
      // the spec moved but the generation did not: no one wrote it; the apiserver filled in a
      // default its CRD gained since, pruned a field, or converted it otherwise
      if (
        event.kbgeneration !== undefined &&
        event.kbgeneration === generationOf(previous) &&
        changes.some(({ path }) => path === 'spec' || path.startsWith('spec.'))
      )
        lines.push(
          "    (spec changed with no new generation: the apiserver's doing, from its CRD (defaults, pruning, conversion), not the writer's)",
        );
    }
    if (event.data !== undefined) previous = event.data;
    lines.push(...outcomesOf(index));
  }
  for (const letter of letters) {
    lines.push(
      `dead letter #${String(letter.seq)} ${printable(letter.time)} from ${printable(letter.origin)} after ${letter.attempts} attempts: ${printable(letter.reason)} (after the fix: kubebus dlq redrive ${String(letter.seq)})`,
    );
  }
  // every field is printed terminal-safe above; the whole once more, as a net
  return lines.length === 0
    ? 'no recorded history: nothing on the bus names this object (check its name and namespace, and that an operator watches its kind)\n'
    : safeText(`${lines.join('\n')}\n`);
}
