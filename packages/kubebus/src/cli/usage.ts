// The usage text and each command's help, written from the command specs:
// what is listed is what is dispatched, with the options it takes.
import type { CommandSpec, OptionSpec, Options } from './command-spec.js';

const HELP: OptionSpec = { type: 'boolean', short: 'h', help: 'this help' };

const SECTIONS: Readonly<Record<CommandSpec['section'], string>> = {
  operators: 'operators',
  bus: 'bus (what is on NATS: kubebus <command> --help for its options)',
  client: 'this client',
};

const FOOTER = `The bus commands, replay and version connect to NATS with --server, --user,
--password, --creds or --context (the nats CLI's flags), else the selected nats
context, else KUBEBUS_NATS_URL, KUBEBUS_NATS_USER and KUBEBUS_NATS_PASSWORD[_FILE];
KUBECONFIG names the apiserver. Every variable: docs/configuration.md.
exit status: 0 ok; 1 the command found a problem (differs, not found, failed) or
cannot reach a server; 2 a usage or configuration error (docs/errors.md).
`;

function optionSynopsis(name: string, option: OptionSpec): string {
  return `--${name}${option.value === undefined ? '' : ` <${option.value}>`}`;
}

/** `kubebus dlq list [--origin <component>] …`: the command, its arguments, its own options. */
export function synopsis(spec: CommandSpec): string {
  return [
    'kubebus',
    spec.name,
    spec.arguments,
    ...Object.entries(spec.options).map(([name, option]) => `[${optionSynopsis(name, option)}]`),
  ]
    .filter((part) => part !== '')
    .join(' ');
}

/** Every option a command accepts: its own, its shared groups', and --help. */
export function optionsOf(spec: CommandSpec): Options {
  return Object.assign({}, spec.options, ...spec.shared.map((group) => group.options), {
    help: HELP,
  }) as Options;
}

function listing(spec: CommandSpec): string {
  return [`  ${synopsis(spec)}`, ...spec.summary.map((line) => `      ${line}`)].join('\n');
}

/** The whole usage: every command, by section. */
export function usageText(commands: readonly CommandSpec[]): string {
  const sections = (Object.keys(SECTIONS) as CommandSpec['section'][]).flatMap((section) => {
    const listed = commands.filter((spec) => spec.section === section);
    return listed.length === 0 ? [] : [`${SECTIONS[section]}\n${listed.map(listing).join('\n')}`];
  });
  return `usage: kubebus <command> [arguments] [options]\n\n${sections.join('\n\n')}\n\n${FOOTER}`;
}

/** One command's help: its usage, what it does, and every option it takes. */
export function commandHelp(spec: CommandSpec): string {
  const groups: { title: string; options: Options }[] = [
    ...(Object.keys(spec.options).length === 0
      ? []
      : [{ title: 'options', options: spec.options }]),
    ...spec.shared,
    { title: 'help', options: { help: HELP } },
  ];
  const left = (name: string, option: OptionSpec) =>
    `${option.short === undefined ? '    ' : `-${option.short}, `}${optionSynopsis(name, option)}`;
  const width = Math.max(
    ...groups.flatMap(({ options }) =>
      Object.entries(options).map(([name, option]) => left(name, option).length),
    ),
  );
  const blocks = groups.map(
    ({ title, options }) =>
      `${title}:\n${Object.entries(options)
        .map(([name, option]) => `  ${left(name, option).padEnd(width)}  ${option.help}`)
        .join('\n')}`,
  );
  return `usage: ${synopsis(spec)}\n\n${spec.summary.map((line) => `  ${line}`).join('\n')}\n\n${blocks.join('\n')}\n`;
}

/** `kubebus dlq --help`: the commands under one word. */
export function groupHelp(word: string, specs: readonly CommandSpec[]): string {
  return `usage:\n${specs.map(listing).join('\n')}\n(kubebus ${word} <command> --help: its options)\n`;
}
