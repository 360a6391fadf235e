// The bus commands: their arguments, options and help, and how each reaches
// its implementation in @kubebus/cli (typed options and a connection).
import {
  dlqInspectCommand,
  dlqListCommand,
  dlqRedriveCommand,
  historyCommand,
  lagCommand,
  statusCommand,
  tailCommand,
  topologyCommand,
} from '@kubebus/cli/commands';
import type { DurableConsumerSpec } from '@kubebus/shared/bus';
import type { Environment } from '@kubebus/shared/config';
import { letterFilterOf, objectRefOf, replicasOf, sequenceOf, storageOf } from './bus-options.js';
import { withBus } from './bus-session.js';
import type { CommandSpec, Options } from './command-spec.js';
import { operatorArgument, stringOption, usageError, type CommandLine } from './commands.js';
import { CONNECTION, OUTPUT } from './shared-options.js';

const OBJECT = '<kind|resource[.group]> <namespace/name | name>';

/** The durable consumers of the operator the topology command names, if it names one. */
async function operatorConsumersOf(
  line: CommandLine,
  env: Environment,
): Promise<{ consumers?: DurableConsumerSpec[]; controller?: string }> {
  if (line.positionals.length === 0) return {};
  const operator = await operatorArgument(line, 'kubebus topology apply [operator module]');
  const { consumersOf } = await import('../host/operator-consumers.js');
  try {
    return { consumers: consumersOf(operator, env), controller: operator.name };
  } catch (error) {
    return usageError((error as Error).message);
  }
}
const BUS = [CONNECTION, OUTPUT];

const LETTER_FILTERS: Options = {
  origin: {
    type: 'string',
    value: 'component',
    help: 'parked by this origin: an operator (its reconciler), <operator>.watcher or <operator>.status-writer',
  },
  code: { type: 'string', value: 'code', help: 'with this error code (docs/errors.md)' },
  since: { type: 'string', value: '30m|2h|7d|time', help: 'parked since then (ISO 8601 time)' },
  after: { type: 'string', value: 'seq', help: 'after this sequence number (paging)' },
  limit: { type: 'string', value: 'n', help: 'at most this many' },
};

const TOPOLOGY: Options = {
  replicas: {
    type: 'string',
    value: '1|3|5',
    help: 'stream and bucket replicas: 1 on one server, 3 or 5 in a cluster',
  },
  storage: {
    type: 'string',
    value: 'name=size,…',
    help: 'set these sizes, e.g. events=2GiB,performed=128MiB; others are kept (docs/security.md)',
  },
};

export const BUS_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'status',
    section: 'bus',
    arguments: OBJECT,
    takes: { min: 2, max: 2 },
    summary: [
      'why it is (not) Ready: conditions, Events, pending work, last outcomes,',
      'dead letters; exit 1 when it is neither on the apiserver nor on the bus',
    ],
    options: {},
    shared: BUS,
    run: (line, host) => {
      const ref = objectRefOf(line);
      return withBus(line, host, (context) => statusCommand(ref, context));
    },
  },
  {
    name: 'history',
    section: 'bus',
    arguments: OBJECT,
    takes: { min: 2, max: 2 },
    summary: ['every recorded revision, with diffs, outcomes and dead letters'],
    options: {},
    shared: BUS,
    run: (line, host) => {
      const ref = objectRefOf(line);
      return withBus(line, host, (context) => historyCommand(ref, context));
    },
  },
  {
    name: 'tail',
    section: 'bus',
    arguments: '[resource[.group]]',
    takes: { min: 0, max: 1 },
    summary: ['changes as they are published, until Ctrl-C'],
    options: {
      namespace: { type: 'string', short: 'n', value: 'ns', help: 'in this namespace only' },
      name: { type: 'string', value: 'name', help: 'objects of this name only' },
    },
    shared: BUS,
    run: (line, host) => {
      const options = {
        resource: line.positionals[0],
        namespace: stringOption(line, 'namespace'),
        name: stringOption(line, 'name'),
        signal: host.interrupted(),
      };
      return withBus(line, host, (context) => tailCommand(options, context));
    },
  },
  {
    name: 'lag',
    section: 'bus',
    arguments: '',
    takes: { min: 0, max: 0 },
    summary: ['how far behind each consumer is'],
    options: {},
    shared: BUS,
    run: (line, host) => withBus(line, host, (context) => lagCommand(context)),
  },
  {
    name: 'dlq list',
    section: 'bus',
    arguments: '',
    takes: { min: 0, max: 0 },
    summary: [
      'the dead letters that match, oldest first; those whose object was reconciled',
      'since are marked: nothing to re-drive there',
    ],
    options: LETTER_FILTERS,
    shared: BUS,
    run: (line, host) => {
      const filter = letterFilterOf(line);
      return withBus(line, host, (context) => dlqListCommand(filter, context));
    },
  },
  {
    name: 'dlq inspect',
    section: 'bus',
    arguments: '<seq>',
    takes: { min: 1, max: 1 },
    summary: ['one dead letter, in full (JSON, or YAML with -o yaml)'],
    options: {},
    shared: BUS,
    run: (line, host) => {
      const seq = sequenceOf(line.positionals[0] ?? '');
      return withBus(line, host, (context) => dlqInspectCommand({ seq }, context));
    },
  },
  {
    name: 'dlq redrive',
    section: 'bus',
    arguments: '[<seq>...]',
    takes: { min: 0, max: Number.POSITIVE_INFINITY },
    summary: [
      'send the letters named (or with --all, every one the filters match) back',
      'where they came from, and remove them from the DLQ; exit 1 if any could not be',
    ],
    options: {
      all: { type: 'boolean', help: 'every dead letter the filters match' },
      ...LETTER_FILTERS,
    },
    shared: BUS,
    run: (line, host) => {
      const all = line.values['all'] === true;
      if (all && line.positionals.length > 0)
        usageError('give sequence numbers or --all with filters, not both');
      if (!all && line.positionals.length === 0)
        usageError('dlq redrive needs sequence numbers (kubebus dlq list shows them) or --all');
      const options = all
        ? { all: letterFilterOf(line) }
        : { seqs: line.positionals.map(sequenceOf) };
      return withBus(line, host, (context) => dlqRedriveCommand(options, context));
    },
  },
  {
    name: 'topology apply',
    section: 'bus',
    arguments: '[operator module]',
    takes: { min: 0, max: 1 },
    summary: [
      "create or update the streams and buckets and, given an operator, its roles'",
      "durable consumers, as the NATS admin user (the roles' own users may not)",
    ],
    options: TOPOLOGY,
    shared: BUS,
    run: async (line, host) => {
      const replicas = replicasOf(line);
      const storage = storageOf(line);
      const consumers = await operatorConsumersOf(line, host.env);
      return withBus(line, host, (context) =>
        topologyCommand({ mode: 'apply', replicas, ...storage, ...consumers }, context),
      );
    },
  },
  {
    name: 'topology check',
    section: 'bus',
    arguments: '[operator module]',
    takes: { min: 0, max: 1 },
    summary: ['say what is missing or differs; exit 1 if anything is'],
    options: TOPOLOGY,
    shared: BUS,
    run: async (line, host) => {
      const replicas = replicasOf(line);
      const storage = storageOf(line);
      const consumers = await operatorConsumersOf(line, host.env);
      return withBus(line, host, (context) =>
        topologyCommand({ mode: 'check', replicas, ...storage, ...consumers }, context),
      );
    },
  },
];
