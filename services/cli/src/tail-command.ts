// `kubebus tail [resource[.group]]`: changes as they are published, one line
// each (one JSON object a line with -o json|yaml), until `signal` aborts.
import type { BusContext, CommandOutcome } from './command.js';
import { tail, tailSubject, formatTailLine } from './tail.js';

export interface TailOptions {
  /** resource[.group]; undefined: every resource */
  readonly resource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  /** Ctrl-C */
  readonly signal: AbortSignal;
}

export async function tailCommand(
  options: TailOptions,
  context: BusContext,
): Promise<CommandOutcome> {
  const [resource, ...group] = options.resource === undefined ? [] : options.resource.split('.');
  const filter = {
    ...(resource === undefined ? {} : { resource, group: group.join('.') }),
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.name === undefined ? {} : { name: options.name }),
  };
  context.stderr.write(`following ${tailSubject(filter)} (Ctrl-C stops)\n`);
  await tail(
    context.nc,
    filter,
    (line) =>
      context.stdout.write(
        `${context.format === 'table' ? formatTailLine(line) : JSON.stringify(line)}\n`,
      ),
    options.signal,
  );
  return 'ok';
}
