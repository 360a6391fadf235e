// The one dispatcher of the kubebus binary: the command's words first
// (`kubebus dlq list …`), then its arguments and options, parsed against what
// the command declares (command-spec.ts). `--help` after any command prints its
// own usage (exit 0); a missing argument prints it on stderr (exit 2); every
// error is one line (failure.ts).
//
// node:util.parseArgs, not commander or yargs: it is in node, so the package
// gains no dependency, and with the commands declared as data (catalogue.ts)
// the usage and per-command help are written from the same declarations it
// parses against — what a framework would add is already here.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { COMMANDS } from './catalogue.js';
import { ExitCodes, type CommandSpec, type Exit, type Host } from './command-spec.js';
import { usageError, type CommandLine } from './commands.js';
import { failureOf } from './failure.js';
import { commandHelp, groupHelp, optionsOf, usageText } from './usage.js';

type Found =
  | { readonly kind: 'command'; readonly spec: CommandSpec; readonly rest: readonly string[] }
  | { readonly kind: 'group'; readonly word: string; readonly specs: readonly CommandSpec[] }
  | { readonly kind: 'none' };

/** The command the leading words name: one word (`lag`), or two (`dlq list`). */
function find(args: readonly string[], commands: readonly CommandSpec[]): Found {
  const [first = '', second = ''] = args;
  const two = commands.find((spec) => spec.name === `${first} ${second}`);
  if (two !== undefined) return { kind: 'command', spec: two, rest: args.slice(2) };
  const one = commands.find((spec) => spec.name === first);
  if (one !== undefined) return { kind: 'command', spec: one, rest: args.slice(1) };
  const specs = commands.filter((spec) => spec.name.startsWith(`${first} `));
  return specs.length > 0 ? { kind: 'group', word: first, specs } : { kind: 'none' };
}

const HELP_WORDS = new Set(['help', '--help', '-h']);

/** Node's parse errors, told in the command's terms. */
function parseFailure(spec: CommandSpec, error: unknown): never {
  const { code, message } = error as { code?: string; message: string };
  const hint = `kubebus ${spec.name} --help lists its options`;
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined)
    usageError(`${spec.name} takes no ${option}; ${hint}`);
  // a value that starts with '-' looks like an option: node says so on its third line
  if (/argument is ambiguous/.test(message) && option !== undefined)
    usageError(
      `${spec.name}: ${option} needs a value; one that starts with '-' is written ${option}${option.startsWith('--') ? '=' : ''}-…`,
    );
  return usageError(`${spec.name}: ${(message.split('\n')[0] ?? '').replace(/\.$/, '')}; ${hint}`);
}

function parse(spec: CommandSpec, rest: readonly string[]): CommandLine {
  const options: ParseArgsConfig['options'] = Object.fromEntries(
    Object.entries(optionsOf(spec)).map(([name, option]) => [
      name,
      option.short === undefined
        ? { type: option.type }
        : { type: option.type, short: option.short },
    ]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true });
  } catch (error) {
    return parseFailure(spec, error);
  }
  const values: Record<string, string | boolean | undefined> = {};
  for (const [name, value] of Object.entries(parsed.values))
    if (typeof value === 'string' || typeof value === 'boolean') values[name] = value;
  return { positionals: parsed.positionals, values };
}

async function runCommand(spec: CommandSpec, rest: readonly string[], host: Host): Promise<Exit> {
  const line = parse(spec, rest);
  if (line.values['help'] === true) {
    host.stdout.write(commandHelp(spec));
    return ExitCodes.ok;
  }
  const count = line.positionals.length;
  if (count < spec.takes.min) {
    host.stderr.write(
      `kubebus: ${spec.name} takes ${spec.arguments}, got ${count === 0 ? 'none' : count}; its usage:\n${commandHelp(spec)}`,
    );
    return ExitCodes.usage;
  }
  if (count > spec.takes.max)
    usageError(
      `${spec.name} takes ${spec.takes.max === 0 ? 'no arguments' : spec.arguments}, got "${line.positionals.join(' ')}"; kubebus ${spec.name} --help shows its usage`,
    );
  return spec.run(line, host);
}

/** Runs the command `args` name; never throws. */
export async function dispatch(
  args: readonly string[],
  host: Host,
  commands: readonly CommandSpec[] = COMMANDS,
): Promise<Exit> {
  const [first, ...after] = args;
  if (first === undefined) {
    host.stderr.write(usageText(commands));
    return ExitCodes.usage;
  }
  if (HELP_WORDS.has(first)) {
    // kubebus help [command]
    const found = after.length === 0 ? undefined : find(after, commands);
    host.stdout.write(
      found?.kind === 'command'
        ? commandHelp(found.spec)
        : found?.kind === 'group'
          ? groupHelp(found.word, found.specs)
          : usageText(commands),
    );
    return ExitCodes.ok;
  }
  const found = find(first === '--version' ? ['version', ...after] : args, commands);
  try {
    switch (found.kind) {
      case 'command':
        return await runCommand(found.spec, found.rest, host);
      case 'group': {
        const sub = args[1];
        if (sub !== undefined && HELP_WORDS.has(sub)) {
          host.stdout.write(groupHelp(found.word, found.specs));
          return ExitCodes.ok;
        }
        const names = found.specs.map((spec) => spec.name.split(' ')[1] ?? '').join(', ');
        if (sub === undefined || sub.startsWith('-')) {
          host.stderr.write(
            `kubebus: ${found.word} needs one of ${names}; its usage:\n${groupHelp(found.word, found.specs)}`,
          );
          return ExitCodes.usage;
        }
        return usageError(
          `unknown command "${found.word} ${sub}"; ${found.word} takes ${names} (kubebus ${found.word} --help)`,
        );
      }
      case 'none':
        return usageError(`unknown command "${first}"; kubebus --help lists the commands`);
    }
  } catch (error) {
    const { line, exit } = failureOf(error, found.kind === 'command' ? found.spec.name : first);
    host.stderr.write(`kubebus: ${line}\n`);
    return exit;
  }
}
