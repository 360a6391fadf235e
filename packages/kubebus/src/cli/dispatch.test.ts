// The dispatcher without servers: help, usage errors, and that the usage lists
// exactly the commands that are wired (each reaches its own code).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from './catalogue.js';
import type { Exit, Host } from './command-spec.js';
import { dispatch } from './dispatch.js';
import { usageText } from './usage.js';

/** The commands the CLI promises (issue 17: one CLI). */
const EXPECTED = [
  'init',
  'run',
  'dev',
  'replay',
  'storage migrate',
  'storage check',
  'test',
  'generate',
  'status',
  'history',
  'tail',
  'lag',
  'dlq list',
  'dlq inspect',
  'dlq redrive',
  'topology apply',
  'topology check',
  'version',
];

/** No nats context, no NATS variables: a bus command stops before any network. */
const noNats = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'kubebus-cli-test-')) };

async function kubebus(
  args: readonly string[],
  env: Record<string, string> = noNats,
): Promise<{ exit: Exit; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const host: Host = {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    interrupted: () => new AbortController().signal,
  };
  const exit = await dispatch(args, host);
  return { exit, stdout, stderr };
}

const words = (name: string) => name.split(' ');

describe('kubebus dispatcher', () => {
  it('lists exactly the commands it dispatches', () => {
    const listed = [...usageText(COMMANDS).matchAll(/^ {2}kubebus ([a-z]+(?: [a-z]+)?)(?= |$)/gm)]
      .map((match) => match[1])
      .sort();
    assert.deepEqual(listed, [...EXPECTED].sort());
    assert.deepEqual(COMMANDS.map(({ name }) => name).sort(), [...EXPECTED].sort());
  });

  it('reaches each command’s own code (no command listed but not wired)', async () => {
    const notEmpty = mkdtempSync(join(tmpdir(), 'kubebus-init-'));
    writeFileSync(join(notEmpty, 'x'), '');
    const noOperator = /^kubebus: missing\.ts does not exist/;
    const noServer = /^kubebus: no NATS server; give --server/;
    // one invocation per command that gets past the dispatcher into the command itself
    const reaches: Record<string, [string[], Exit, RegExp]> = {
      init: [[notEmpty], 2, /is not empty/],
      run: [['missing.ts'], 2, noOperator],
      dev: [['missing.ts'], 2, noOperator],
      replay: [['missing.ts', 'ns/name'], 2, noOperator],
      'storage migrate': [['missing.ts'], 2, noOperator],
      'storage check': [['missing.ts'], 2, noOperator],
      test: [['missing.ts'], 2, noOperator],
      generate: [['missing.ts'], 2, noOperator],
      status: [['widgets', 'ns/name'], 2, noServer],
      history: [['widgets', 'ns/name'], 2, noServer],
      tail: [[], 2, noServer],
      lag: [[], 2, noServer],
      'dlq list': [[], 2, noServer],
      'dlq inspect': [['1'], 2, noServer],
      'dlq redrive': [['1'], 2, noServer],
      'topology apply': [[], 2, noServer],
      'topology check': [[], 2, noServer],
      version: [[], 0, /^$/],
    };
    assert.deepEqual(Object.keys(reaches).sort(), [...EXPECTED].sort());
    for (const [name, [args, exit, stderr]] of Object.entries(reaches)) {
      const result = await kubebus([...words(name), ...args]);
      assert.equal(result.exit, exit, `${name}: ${result.stderr}`);
      assert.match(result.stderr, stderr, name);
    }
  });

  it('prints each command’s usage and options on --help, and nothing else', async () => {
    for (const spec of COMMANDS) {
      const result = await kubebus([...words(spec.name), '--help']);
      assert.equal(result.exit, 0, spec.name);
      assert.equal(result.stderr, '');
      assert.ok(result.stdout.startsWith(`usage: kubebus ${spec.name}`), result.stdout);
      for (const option of Object.keys(spec.options))
        assert.match(result.stdout, new RegExp(`--${option}\\b`), `${spec.name} --${option}`);
      for (const other of COMMANDS)
        if (other.name !== spec.name && !other.name.startsWith(`${spec.name} `))
          assert.doesNotMatch(result.stdout, new RegExp(`usage: kubebus ${other.name}\\b`));
    }
    const dlq = await kubebus(['dlq', 'list', '--help']);
    assert.match(dlq.stdout, /^usage: kubebus dlq list \[--origin/);
    assert.match(dlq.stdout, /-s, --server <url>/);
    assert.equal((await kubebus(['help', 'lag'])).stdout, (await kubebus(['lag', '-h'])).stdout);
  });

  it('prints the usage: on stdout for --help, on stderr with exit 2 for nothing', async () => {
    const help = await kubebus(['--help']);
    assert.equal(help.exit, 0);
    assert.match(help.stdout, /^usage: kubebus <command>/);
    assert.match(help.stdout, /docs\/configuration\.md/);
    const nothing = await kubebus([]);
    assert.equal(nothing.exit, 2);
    assert.equal(nothing.stdout, '');
    assert.equal(nothing.stderr, help.stdout);
  });

  it('prints a command’s usage on stderr, exit 2, when its arguments are missing', async () => {
    for (const spec of COMMANDS.filter(({ takes }) => takes.min > 0)) {
      const result = await kubebus(words(spec.name));
      assert.equal(result.exit, 2, spec.name);
      assert.equal(result.stdout, '');
      const [first, ...rest] = result.stderr.split('\n');
      assert.match(first ?? '', new RegExp(`^kubebus: ${spec.name} takes .*; its usage:$`));
      assert.ok(rest.join('\n').startsWith(`usage: kubebus ${spec.name}`), result.stderr);
    }
    const history = await kubebus(['history']);
    assert.match(history.stderr, /^usage: kubebus history <kind\|resource\[\.group\]> /m);
  });

  it('refuses unknown commands, options and values in one line, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /^kubebus: unknown command "frobnicate"; kubebus --help lists/],
      [['dlq', 'bogus'], /^kubebus: unknown command "dlq bogus"; dlq takes list, inspect, redrive/],
      [['lag', '--origin', 'x'], /^kubebus: lag takes no --origin; kubebus lag --help lists/],
      [['dlq', 'list', '--origin'], /^kubebus: dlq list: .*--origin.*; kubebus dlq list --help/],
      [['lag', 'extra'], /^kubebus: lag takes no arguments, got "extra"; /],
      [['dlq', 'list', '--since', 'yesterday'], /^kubebus: --since "yesterday" is neither/],
      [['dlq', 'list', '--limit', '0'], /^kubebus: --limit "0" is not a positive whole number; /],
      [
        ['dlq', 'list', '--limit', '-3'],
        /^kubebus: dlq list: --limit needs a value; one that starts with '-' is written --limit=-…$/m,
      ],
      [['dlq', 'inspect', 'x'], /^kubebus: "x" is not a dead letter's sequence number; /],
      [['dlq', 'inspect', '1', '-o', 'xml'], /^kubebus: -o "xml" is not an output format; /],
      [['dlq', 'redrive'], /^kubebus: dlq redrive needs sequence numbers/],
      [['dlq', 'redrive', '1', '--all'], /^kubebus: give sequence numbers or --all/],
      [['topology', 'check', '--replicas', '2'], /^kubebus: --replicas "2" is not 1, 3 or 5; /],
      [['replay', 'x.ts', 'ns/n', '--from', '0'], /^kubebus: --from "0" is not a revision's/],
    ];
    for (const [args, message] of cases) {
      const result = await kubebus(args);
      assert.equal(result.exit, 2, args.join(' '));
      assert.match(result.stderr, message);
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
    }
  });

  it('names the bad variable of the environment, exit 2', async () => {
    const result = await kubebus(['lag'], { ...noNats, KUBEBUS_NATS_URL: 'localhost' });
    assert.equal(result.exit, 2);
    assert.match(result.stderr, /^kubebus: KUBEBUS_NATS_URL: expected nats:\/\/host:port/);
  });
});
