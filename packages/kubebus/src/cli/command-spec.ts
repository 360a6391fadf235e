// What a command of the kubebus binary declares: the words that name it, its
// arguments, its options (each with its help), and what runs it. The usage
// text, per-command help and option parsing are all made from these, so a
// command cannot be listed and not wired, or take an option its help omits.
import type { Environment } from '@kubebus/shared/config';
import type { Writer } from '@kubebus/cli/commands';
import type { CommandLine } from './commands.js';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** the value's placeholder in the usage: `--from <seq>` */
  readonly value?: string;
  readonly help: string;
}

export type Options = Readonly<Record<string, OptionSpec>>;

/** The exit statuses of every command (docs/errors.md). */
export const ExitCodes = {
  /** done, nothing wrong */
  ok: 0,
  /** the command ran and found a problem (differs, not found, failed), or could not reach a server */
  problem: 1,
  /** the command line or the configuration is wrong: nothing was done */
  usage: 2,
} as const;
export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];
/** run and dev return once started: their servers and signal handlers keep the process */
export type Exit = ExitCode | 'running';

/** What a command is given of the process (main.ts is the only module that touches it). */
export interface Host {
  readonly env: Environment;
  readonly stdout: Writer;
  readonly stderr: Writer;
  /** aborts on SIGINT or SIGTERM (commands that follow until stopped) */
  interrupted(): AbortSignal;
}

export interface CommandSpec {
  /** one or two words: `history`, `dlq list` */
  readonly name: string;
  /** the section of the usage it is listed in */
  readonly section: 'operators' | 'bus' | 'client';
  /** the positional arguments, as the usage shows them ('' when none) */
  readonly arguments: string;
  /** how many positional arguments it takes; fewer or more is a usage error */
  readonly takes: { readonly min: number; readonly max: number };
  /** what it does, a line or two */
  readonly summary: readonly string[];
  /** its own options, in the order the usage lists them */
  readonly options: Options;
  /** option groups it also takes (the NATS connection, the output format) */
  readonly shared: readonly SharedOptions[];
  run(line: CommandLine, host: Host): Promise<Exit>;
}

export interface SharedOptions {
  readonly title: string;
  readonly options: Options;
}
