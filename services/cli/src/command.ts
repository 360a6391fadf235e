// What every bus command is handed, and what it hands back: the NATS
// connection, the apiserver client when a kubeconfig is at hand, where to
// print and how; then whether it found a problem. Parsing the command line and
// reading the environment are the caller's (packages/kubebus/src/cli).
import type { KubeClient } from '@kubebus/shared/kube';
import type { NatsConnection } from '@nats-io/nats-core';
import { stringify } from 'yaml';

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

/** A value as JSON or YAML (-o json|yaml); JSON when the format is a table. */
export function machine(format: OutputFormat, value: unknown): string {
  return format === 'yaml' ? stringify(value) : `${JSON.stringify(value, null, 2)}\n`;
}

/** Prints `value` for machines, or `table()` for people. */
export function print(context: BusContext, value: unknown, table: () => string): void {
  context.stdout.write(context.format === 'table' ? table() : machine(context.format, value));
}
