// What every bus command is handed, and what it hands back: the NATS
// connection, the apiserver client when a kubeconfig is at hand, where to
// print and how; then whether it found a problem. Parsing the command line and
// reading the environment are the caller's (packages/kubebus/src/cli).
import type { KubeClient } from '@kubebus/shared/kube';
import type { NatsConnection } from '@nats-io/nats-core';
import { stringify } from 'yaml';
import { actsOnTerminal, inertDoubleQuotedYaml, inertJson } from './terminal-safe.js';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** process.stdout, or anything that collects text (tests). */
export interface Writer {
  write(text: string): unknown;
}

export interface BusContext {
  readonly nc: NatsConnection;
  /** set when a kubeconfig is: kinds resolved like kubectl, Events, the live object */
  readonly kube?: KubeClient | undefined;
  /** results */
  readonly stdout: Writer;
  /** progress and per-item failures */
  readonly stderr: Writer;
  readonly format: OutputFormat;
}

/** ok, or the command ran and found a problem (not found, differs, some failed). */
export type CommandOutcome = 'ok' | 'problem';

/**
 * A value as JSON or YAML (-o json|yaml); JSON when the format is a table.
 * Strings off the bus and the apiserver may hold what acts on a terminal:
 * escaped, the same data to a parser.
 */
export function machine(format: OutputFormat, value: unknown): string {
  if (format !== 'yaml') return `${inertJson(JSON.stringify(value, null, 2))}\n`;
  const text = stringify(value);
  // every string double-quoted, where an escape can say what a plain one cannot
  return actsOnTerminal(text)
    ? inertDoubleQuotedYaml(
        // unfolded: yaml 2's folding of long double-quoted lines loses a line of one space
        stringify(value, {
          defaultStringType: 'QUOTE_DOUBLE',
          lineWidth: 0,
          doubleQuotedMinMultiLineLength: Number.POSITIVE_INFINITY,
        }),
      )
    : text;
}

/** Prints `value` for machines, or `table()` for people. */
export function print(context: BusContext, value: unknown, table: () => string): void {
  context.stdout.write(context.format === 'table' ? table() : machine(context.format, value));
}
