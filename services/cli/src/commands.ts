// The bus commands, their usage and the options each one takes: `--help`
// after a command prints its own lines, and an option the command does not
// take is refused in one line (exit 2) instead of being silently ignored.
import { parseArgs } from 'node:util';

interface Command {
  readonly usage: string;
  readonly options: readonly OptionName[];
}

const OPTIONS = {
  origin: { type: 'string' },
  code: { type: 'string' },
  since: { type: 'string' },
  after: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  namespace: { type: 'string', short: 'n' },
  name: { type: 'string' },
  json: { type: 'boolean' },
  output: { type: 'string', short: 'o' },
  server: { type: 'string', short: 's' },
  user: { type: 'string' },
  password: { type: 'string' },
  creds: { type: 'string' },
  context: { type: 'string' },
  replicas: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
type OptionName = keyof typeof OPTIONS;

/** Taken by every command: where the bus is, how to print, help. */
const COMMON: readonly OptionName[] = [
  'server',
  'user',
  'password',
  'creds',
  'context',
  'output',
  'json',
  'help',
];
const LETTER_FILTERS: readonly OptionName[] = ['origin', 'code', 'since', 'after', 'limit'];

export const COMMANDS: Readonly<Record<string, Command>> = {
  status: {
    usage:
      'kubebus status <kind|resource[.group]> <namespace/name | name>   conditions, Events, pending work, last outcomes, dead letters',
    options: [],
  },
  history: {
    usage:
      'kubebus history <kind|resource[.group]> <namespace/name | name>  every recorded revision, with diffs and outcomes',
    options: [],
  },
  tail: {
    usage:
      'kubebus tail [resource[.group]] [--namespace <ns>] [--name <name>]   changes as they are published',
    options: ['namespace', 'name'],
  },
  lag: {
    usage:
      'kubebus lag                                                    how far behind each consumer is',
    options: [],
  },
  'dlq list': {
    usage:
      'kubebus dlq list [--origin <c>] [--code <code>] [--since <1h|ISO time>] [--after <seq>] [--limit <n>]',
    options: LETTER_FILTERS,
  },
  'dlq inspect': {
    usage:
      'kubebus dlq inspect <seq>                                      one dead letter, in full',
    options: [],
  },
  'dlq redrive': {
    usage:
      'kubebus dlq redrive <seq>... | --all [same filters]             send them back, remove them from the DLQ',
    options: ['all', ...LETTER_FILTERS],
  },
  'topology apply': {
    usage:
      'kubebus topology apply [--replicas <1|3|5>]                      create or update the streams and buckets (as the NATS admin user)',
    options: ['replicas'],
  },
  'topology check': {
    usage:
      'kubebus topology check [--replicas <1|3|5>]                      say what is missing or differs; exit 1 if anything is',
    options: ['replicas'],
  },
};

const CONNECTION = `connection: --server nats://host:4222 [--user u --password p | --creds file] or --context <nats context>,
else the selected nats context or KUBEBUS_NATS_URL, KUBEBUS_NATS_USER, KUBEBUS_NATS_PASSWORD;
KUBECONFIG (kinds and short names resolved like kubectl, Events, the object as the apiserver has it)
output: -o table (default) | json | yaml
`;

export const USAGE = `usage:\n${Object.values(COMMANDS)
  .map(({ usage }) => `  ${usage}`)
  .join('\n')}\n${CONNECTION}`;

export type ParsedCommandLine = ReturnType<typeof parse>;

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], allowPositionals: true, options: OPTIONS });
}

/** The command a command line names: `dlq list`, `status`, … (undefined if none). */
export function commandOf(positionals: readonly string[]): string | undefined {
  const [first, second] = positionals;
  if (first === undefined) return undefined;
  const twoWords = `${first} ${second ?? ''}`;
  return twoWords in COMMANDS ? twoWords : first in COMMANDS ? first : undefined;
}

export type CommandLineResult =
  | { readonly kind: 'run'; readonly command: string; readonly parsed: ParsedCommandLine }
  | { readonly kind: 'help'; readonly text: string; readonly exitCode: 0 | 2 }
  | { readonly kind: 'error'; readonly message: string };

/** The command line read against the table above; never throws. */
export function readCommandLine(args: readonly string[]): CommandLineResult {
  let parsed: ParsedCommandLine;
  try {
    parsed = parse(args);
  } catch (error) {
    // node's messages are one line already ("Unknown option '--bogus'…")
    return {
      kind: 'error',
      message: `${(error as Error).message.split('\n')[0] ?? ''} (kubebus --help lists the options)`,
    };
  }
  const command = commandOf(parsed.positionals);
  const help = parsed.values.help === true;
  if (command === undefined) {
    if (help || parsed.positionals.length === 0)
      return { kind: 'help', text: USAGE, exitCode: help ? 0 : 2 };
    return {
      kind: 'error',
      message: `unknown command "${parsed.positionals.join(' ')}" (kubebus --help lists the commands)`,
    };
  }
  const { usage, options } = COMMANDS[command] as Command;
  if (help) return { kind: 'help', text: `usage: ${usage}\n${CONNECTION}`, exitCode: 0 };
  const allowed = new Set([...COMMON, ...options]);
  const refused = Object.keys(parsed.values).find((name) => !allowed.has(name as OptionName));
  if (refused !== undefined)
    return {
      kind: 'error',
      message: `kubebus ${command} takes no --${refused} (kubebus ${command} --help lists its options)`,
    };
  return { kind: 'run', command, parsed };
}
