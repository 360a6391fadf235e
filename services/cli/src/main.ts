// kubebus: the command line for people. history · tail · lag · dlq list · dlq inspect · dlq redrive
import { loadConfig } from '@kubebus/shared/config';
import { connect } from '@nats-io/transport-node';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { formatLetter, inspectDeadLetter, listDeadLetters, printable, redrive } from './dlq.js';
import { applyTopology, defaultTopology, readOutcomes, readRevisions } from '@kubebus/shared/bus';
import { formatHistory, readDeadLettersOf } from './history.js';
import { connectionOf, type Connection } from './connection.js';
import { formatLag, readLag } from './lag.js';
import { COMMANDS, readCommandLine } from './commands.js';
import { literalResource, resolveResource } from './resolve-resource.js';
import { formatStatus, readStatus } from './status.js';
import { KubeClient, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { formatTailLine, tail, tailSubject } from './tail.js';
import { formatTopology } from './topology.js';

const ConfigSchema = z.object({
  KUBECONFIG: z.string().optional(),
  KUBEBUS_NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\//, 'expected nats://host:port')
    .optional(),
  KUBEBUS_NATS_USER: z.string().optional(),
  KUBEBUS_NATS_PASSWORD: z.string().optional(),
});

function fail(message: string): never {
  process.stderr.write(`kubebus: ${message}\n`);
  process.exit(2);
}

const commandLine = readCommandLine(process.argv.slice(2));
if (commandLine.kind === 'error') fail(commandLine.message);
if (commandLine.kind === 'help') {
  process.stdout.write(commandLine.text);
  process.exit(commandLine.exitCode);
}
const { positionals, values } = commandLine.parsed;
const FORMATS = ['table', 'json', 'yaml'] as const;
const format =
  values.json === true
    ? 'json'
    : (FORMATS.find((known) => known === (values.output ?? 'table')) ??
      fail(`-o takes ${FORMATS.join(', ')}; got ${JSON.stringify(values.output)}`));
/** -o json|yaml (or --json): machine-readable output */
const json = format !== 'table';
/** A value as JSON or YAML, for -o json|yaml. */
const machine = (value: unknown) =>
  format === 'yaml' ? stringifyYaml(value) : `${JSON.stringify(value, null, 2)}\n`;

let env: z.output<typeof ConfigSchema>;
try {
  env = loadConfig(ConfigSchema, process.env);
} catch (error) {
  fail((error as Error).message);
}
let connection: Connection;
try {
  connection = connectionOf(values, process.env);
} catch (error) {
  fail((error as Error).message);
}
const nc = await connect(connection.options).catch((error: unknown) => {
  process.stderr.write(
    `kubebus: cannot connect to NATS at ${connection.url} (from ${connection.from}): ${(error as Error).message}; check the server and the user\n`,
  );
  process.exit(1);
});

const kube =
  env.KUBECONFIG === undefined
    ? undefined
    : new KubeClient(
        await loadKubeConfig(env.KUBECONFIG, process.env).catch((error: unknown) =>
          fail(
            `cannot load KUBECONFIG ${env.KUBECONFIG}: ${(error as Error).message.split('\n')[0] ?? ''}`,
          ),
        ),
        restClientMetrics(new Registry()),
      );

/** A resource as typed: resolved through discovery with a kubeconfig, else resource[.group]. */
async function resourceOf(
  text: string,
): Promise<{ group: string; resource: string; version?: string; namespaced?: boolean }> {
  if (kube === undefined) return literalResource(text);
  const resolved = await resolveResource(kube, text);
  return (
    resolved ??
    fail(`the apiserver serves no resource called "${text}" (kubectl api-resources lists them)`)
  );
}

/** --since: a duration back from now (30m, 2h, 7d) or a time (ISO 8601). */
function sinceOption(text: string): Date {
  const ago = /^(\d+)(s|m|h|d)$/.exec(text);
  if (ago !== null) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
      ago[2] as 's' | 'm' | 'h' | 'd'
    ];
    return new Date(Date.now() - Number(ago[1]) * unit);
  }
  const time = new Date(text);
  return Number.isNaN(time.getTime())
    ? fail(
        `--since takes a duration such as 30m, 2h, 7d, or a time such as 2026-11-30T12:00:00Z; got ${JSON.stringify(text)}`,
      )
    : time;
}

/** The dead-letter filters of the command line. */
function letterFilter() {
  const positive = (name: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    return Number.isInteger(n) && n > 0
      ? n
      : fail(`--${name} takes a positive whole number, got ${JSON.stringify(text)}`);
  };
  const after = positive('after', values.after);
  const limit = positive('limit', values.limit);
  return {
    ...(values.origin === undefined ? {} : { origin: values.origin }),
    ...(values.code === undefined ? {} : { code: values.code }),
    ...(values.since === undefined ? {} : { since: sinceOption(values.since) }),
    ...(after === undefined ? {} : { after }),
    ...(limit === undefined ? {} : { limit }),
  };
}

/** A sequence number from the command line, or exit 2 saying what was expected. */
function sequence(text: string | undefined): number {
  const seq = Number(text);
  if (text === undefined || !Number.isInteger(seq) || seq <= 0)
    return fail(
      `expected a dead letter's sequence number (see kubebus dlq list), got ${JSON.stringify(text ?? '')}`,
    );
  return seq;
}

try {
  const [command, sub, ...rest] = positionals;
  if (command === 'history' || command === 'status') {
    const missing = () => fail(`usage: ${COMMANDS[command]?.usage ?? ''}`);
    const where = rest[0] ?? missing();
    const resolved = await resourceOf(sub ?? missing());
    const [namespace, name] = where.includes('/') ? where.split('/', 2) : ['', where];
    const key = {
      group: resolved.group,
      resource: resolved.resource,
      namespace: resolved.namespaced === false ? '' : (namespace ?? ''),
      name: name ?? '',
    };
    if (command === 'status') {
      const status = await readStatus(nc, kube, {
        ...key,
        ...(resolved.version === undefined ? {} : { version: resolved.version }),
        ...(resolved.namespaced === undefined ? {} : { namespaced: resolved.namespaced }),
      });
      process.stdout.write(json ? machine(status) : formatStatus(status));
      process.exitCode = status.found === 'nowhere' ? 1 : 0;
    } else {
      const revisions = await readRevisions(nc, key);
      const letters = await readDeadLettersOf(nc, key);
      const outcomes = await readOutcomes(nc, key);
      process.stdout.write(
        json
          ? machine({ revisions, outcomes, letters })
          : formatHistory(revisions, letters, outcomes),
      );
    }
  } else if (command === 'tail') {
    const [resource, ...group] = sub === undefined ? [] : sub.split('.');
    const filter = {
      ...(resource === undefined ? {} : { resource, group: group.join('.') }),
      ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
      ...(values.name === undefined ? {} : { name: values.name }),
    };
    const stop = new AbortController();
    process.once('SIGINT', () => {
      stop.abort();
    });
    process.once('SIGTERM', () => {
      stop.abort();
    });
    process.stderr.write(`following ${tailSubject(filter)} (Ctrl-C stops)\n`);
    await tail(
      nc,
      filter,
      (line) => process.stdout.write(`${json ? JSON.stringify(line) : formatTailLine(line)}\n`),
      stop.signal,
    );
  } else if (command === 'topology') {
    const replicas = Number(values.replicas ?? '1');
    if (![1, 3, 5].includes(replicas)) fail(`--replicas takes 1, 3 or 5, got ${values.replicas}`);
    const changes = await applyTopology(
      nc,
      { ...defaultTopology, replicas },
      sub === 'check' ? 'check' : 'apply',
    );
    process.stdout.write(json ? machine(changes) : formatTopology(changes));
    if (changes.some(({ result }) => result === 'missing' || result === 'differs'))
      process.exitCode = 1;
  } else if (command === 'lag') {
    const lags = await readLag(nc);
    process.stdout.write(json ? machine(lags) : formatLag(lags));
  } else if (command === 'dlq' && sub === 'list') {
    const letters = await listDeadLetters(nc, letterFilter());
    process.stdout.write(
      json
        ? machine(letters)
        : letters.length === 0
          ? 'no dead letters match\n'
          : `${letters.map(formatLetter).join('\n')}\n`,
    );
  } else if (command === 'dlq' && sub === 'inspect') {
    process.stdout.write(machine(await inspectDeadLetter(nc, sequence(rest[0]))));
  } else if (command === 'dlq' && sub === 'redrive') {
    if (values.all === true) {
      if (rest.length > 0) fail('give sequence numbers or --all with filters, not both');
      const letters = await listDeadLetters(nc, letterFilter());
      let done = 0;
      let failed = 0;
      for (const { seq } of letters) {
        try {
          await redrive(nc, seq);
          done++;
        } catch (error) {
          failed++;
          process.stderr.write(`kubebus: #${seq}: ${printable((error as Error).message, 300)}\n`);
        }
        process.stderr.write(
          `\rre-drove ${done}/${letters.length}${failed > 0 ? `, ${failed} failed` : ''}`,
        );
      }
      process.stderr.write('\n');
      process.stdout.write(`re-drove ${done} of ${letters.length} dead letters\n`);
      if (failed > 0) process.exitCode = 1;
    } else {
      if (rest.length === 0)
        fail('dlq redrive needs the sequence numbers of the letters (see dlq list), or --all');
      for (const seq of rest.map(sequence)) process.stdout.write(`${await redrive(nc, seq)}\n`);
    }
  } else {
    fail(`unknown command "${positionals.join(' ')}" (kubebus --help lists the commands)`);
  }
} catch (error) {
  const message = (error as Error).message;
  process.stderr.write(
    /stream not found/i.test(message)
      ? `kubebus: ${message}: this NATS server holds no kubebus streams (is KUBEBUS_NATS_URL the one your kubebus services use?)\n`
      : `kubebus: ${printable(message, 500)}\n`,
  );
  process.exitCode = 1;
} finally {
  await nc.close();
}
