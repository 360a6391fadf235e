// `kubebus dlq list|inspect|redrive`: the dead letters that match, one in
// full, and sending them back where they came from.
import { machine, print, type BusContext, type CommandOutcome } from './command.js';
import {
  formatLetter,
  inspectDeadLetter,
  listDeadLetters,
  printable,
  redrive,
  type LetterFilter,
  type StoredLetter,
} from './dlq.js';
import { readReconciledSince } from './letter-recovery.js';
import { jetstreamManager } from '@nats-io/jetstream';

/** Outcome reads in flight at once while a list is annotated. */
const READS_AT_ONCE = 16;

export async function dlqListCommand(
  filter: LetterFilter,
  context: BusContext,
): Promise<CommandOutcome> {
  const letters = await withRecovery(context, await listDeadLetters(context.nc, filter));
  print(context, letters, () =>
    letters.length === 0 ? 'no dead letters match\n' : `${letters.map(formatLetter).join('\n')}\n`,
  );
  return 'ok';
}

/**
 * Each letter with whether its object was reconciled since: a letter stays for
 * the record after its object recovered (a spec change, a new version), and
 * re-driving it would only repeat that.
 */
async function withRecovery(
  context: BusContext,
  letters: readonly StoredLetter[],
): Promise<StoredLetter[]> {
  const out: StoredLetter[] = [];
  const jsm = await jetstreamManager(context.nc);
  for (let start = 0; start < letters.length; start += READS_AT_ONCE)
    out.push(
      ...(await Promise.all(
        letters.slice(start, start + READS_AT_ONCE).map(async (stored) => {
          const since = await readReconciledSince(context.nc, stored.letter, jsm);
          return since === undefined ? stored : { ...stored, reconciledSince: since };
        }),
      )),
    );
  return out;
}

/** One letter in full: JSON, or YAML with -o yaml (a letter is no table). */
export async function dlqInspectCommand(
  options: { readonly seq: number },
  context: BusContext,
): Promise<CommandOutcome> {
  context.stdout.write(machine(context.format, await inspectDeadLetter(context.nc, options.seq)));
  return 'ok';
}

/** The letters named by sequence, or every letter a filter matches. */
export type RedriveOptions = { readonly seqs: readonly number[] } | { readonly all: LetterFilter };

/** A problem when any letter could not be sent back (each named on stderr). */
export async function dlqRedriveCommand(
  options: RedriveOptions,
  context: BusContext,
): Promise<CommandOutcome> {
  if ('seqs' in options) {
    for (const seq of options.seqs) context.stdout.write(`${await redrive(context.nc, seq)}\n`);
    return 'ok';
  }
  const letters = await listDeadLetters(context.nc, options.all);
  let done = 0;
  let failed = 0;
  for (const { seq } of letters) {
    try {
      await redrive(context.nc, seq);
      done++;
    } catch (error) {
      failed++;
      context.stderr.write(`kubebus: #${seq}: ${printable((error as Error).message, 300)}\n`);
    }
    context.stderr.write(
      `\rre-drove ${done}/${letters.length}${failed > 0 ? `, ${failed} failed` : ''}`,
    );
  }
  context.stderr.write('\n');
  context.stdout.write(`re-drove ${done} of ${letters.length} dead letters\n`);
  return failed > 0 ? 'problem' : 'ok';
}
