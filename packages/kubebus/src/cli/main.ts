#!/usr/bin/env node
// kubebus: run, generate and replay operators; history and the DLQ. The only
// place of the package that reads the environment, the command line and
// signals.
import { parseArgs } from 'node:util';
import { USAGE, usageError, type CommandLine } from './commands.js';

const [command] = process.argv.slice(2);

async function main(): Promise<void> {
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      process.exitCode = command === undefined ? 2 : 0;
      return;
    case 'version':
    case '--version':
      return (await import('./version-command.js')).versionCommand(process.env);
    case 'run':
      return (await import('./run.js')).run(options(['role']));
    case 'generate':
      return (await import('./generate.js')).generate(
        options(['out', 'namespace', 'only', 'watch-namespaces']),
      );
    case 'init':
      (await import('./init.js')).init(options([]));
      return;
    case 'dev':
      return (await import('./dev.js')).dev(options(['log-level'], ['no-stand-in']));
    case 'replay':
      return (await import('./replay.js')).replayCommand(options(['from', 'to'], ['json']));
    case 'history':
    case 'status':
    case 'tail':
    case 'lag':
    case 'dlq':
    case 'topology':
      // the bus tools parse the same argv themselves
      await import('@kubebus/cli/main');
      return;
    default:
      usageError(`unknown command "${command}" (kubebus --help lists the commands)`);
  }
}

function options(strings: readonly string[], booleans: readonly string[] = []): CommandLine {
  try {
    const parsed = parseArgs({
      args: process.argv.slice(3),
      allowPositionals: true,
      options: {
        ...Object.fromEntries(strings.map((name) => [name, { type: 'string' as const }])),
        ...Object.fromEntries(booleans.map((name) => [name, { type: 'boolean' as const }])),
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (parsed.values.help === true) {
      // this command's lines of the usage
      const lines = USAGE.split('\n');
      const start = lines.findIndex((line) => line.startsWith(`  kubebus ${command ?? ''} `));
      const own = lines.slice(
        start,
        start + 1 + lines.slice(start + 1).findIndex((l) => !l.startsWith('      ')),
      );
      process.stdout.write(`${(start < 0 || own.length === 0 ? lines : own).join('\n')}\n`);
      process.exit(0);
    }
    return { positionals: parsed.positionals, values: parsed.values };
  } catch (error) {
    return usageError(
      `${(error as Error).message.split('\n')[0] ?? ''} (kubebus --help lists the options)`,
    );
  }
}

await main();
