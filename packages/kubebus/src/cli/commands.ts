// What a command's module gets from the dispatcher (dispatch.ts), and the
// helpers the commands that take an operator module share.
import { UsageError } from '@kubebus/cli/commands';

export interface CommandLine {
  /** the arguments after the command's words */
  readonly positionals: readonly string[];
  /** the options the command declares, parsed (see command-spec.ts) */
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
}

/**
 * The command line or the configuration is wrong: the dispatcher prints
 * `kubebus: <message>` and exits 2. Say what happened, then what to do.
 */
export function usageError(message: string): never {
  throw new UsageError(message);
}

/** A string option's value, undefined when not given. */
export function stringOption(line: CommandLine, name: string): string | undefined {
  const value = line.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The operator module named first on the command line, loaded; or a usage error saying why. */
export async function operatorArgument(
  line: CommandLine,
  usage: string,
): Promise<import('@kubebus/shared/definition').Operator> {
  const file = line.positionals[0];
  if (file === undefined) return usageError(`missing the operator module; usage: ${usage}`);
  const { loadOperator } = await import('../host/load-operator.js');
  try {
    return await loadOperator(file);
  } catch (error) {
    return usageError((error as Error).message);
  }
}
