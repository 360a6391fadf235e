// kubebus: the command line for people. history · dlq list · dlq inspect · dlq redrive
import { loadConfig } from '@kubebus/shared/config';
import { connect } from '@nats-io/transport-node';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { formatLetter, inspectDeadLetter, listDeadLetters, redrive } from './dlq.js';
import { readRevisions } from '@kubebus/shared/bus';
import { formatHistory, readDeadLettersOf } from './history.js';

const USAGE = `usage:
  kubebus history <resource[.group]> <namespace/name | name>   every recorded revision, with diffs
  kubebus dlq list [--origin <component>]                        dead letters
  kubebus dlq inspect <seq>                                      one dead letter, in full
  kubebus dlq redrive <seq>...                                   send them back, remove them from the DLQ
environment: KUBEBUS_NATS_URL (required), KUBEBUS_NATS_USER, KUBEBUS_NATS_PASSWORD
`;

const ConfigSchema = z.object({
  KUBEBUS_NATS_URL: z.string().regex(/^(nats|tls):\/\//, 'expected nats://host:port'),
  KUBEBUS_NATS_USER: z.string().optional(),
  KUBEBUS_NATS_PASSWORD: z.string().optional(),
});

function fail(message: string): never {
  process.stderr.write(`kubebus: ${message}\n`);
  process.exit(2);
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    origin: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help === true || positionals.length === 0) {
  process.stdout.write(USAGE);
  process.exit(values.help === true ? 0 : 2);
}

let env: z.output<typeof ConfigSchema>;
try {
  env = loadConfig(ConfigSchema, process.env);
} catch (error) {
  fail((error as Error).message);
}
const nc = await connect({
  servers: env.KUBEBUS_NATS_URL.split(','),
  ...(env.KUBEBUS_NATS_USER === undefined ? {} : { user: env.KUBEBUS_NATS_USER }),
  ...(env.KUBEBUS_NATS_PASSWORD === undefined ? {} : { pass: env.KUBEBUS_NATS_PASSWORD }),
});

try {
  const [command, sub, ...rest] = positionals;
  if (command === 'history') {
    const [resourceName = '', ...group] = (sub ?? '').split('.');
    const where = rest[0] ?? fail(USAGE);
    const [namespace, name] = where.includes('/') ? where.split('/', 2) : ['', where];
    const key = {
      group: group.join('.'),
      resource: resourceName,
      namespace: namespace ?? '',
      name: name ?? '',
    };
    const revisions = await readRevisions(nc, key);
    const letters = await readDeadLettersOf(nc, key);
    process.stdout.write(
      values.json === true
        ? `${JSON.stringify({ revisions, letters }, null, 2)}\n`
        : formatHistory(revisions, letters),
    );
  } else if (command === 'dlq' && sub === 'list') {
    const letters = await listDeadLetters(nc, values.origin);
    process.stdout.write(
      letters.length === 0 ? 'the DLQ is empty\n' : `${letters.map(formatLetter).join('\n')}\n`,
    );
  } else if (command === 'dlq' && sub === 'inspect') {
    process.stdout.write(
      `${JSON.stringify(await inspectDeadLetter(nc, Number(rest[0])), null, 2)}\n`,
    );
  } else if (command === 'dlq' && sub === 'redrive') {
    if (rest.length === 0)
      fail('dlq redrive needs the sequence numbers of the letters (see dlq list)');
    for (const seq of rest) process.stdout.write(`${await redrive(nc, Number(seq))}\n`);
  } else {
    fail(`unknown command\n${USAGE}`);
  }
} catch (error) {
  process.stderr.write(`kubebus: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await nc.close();
}
