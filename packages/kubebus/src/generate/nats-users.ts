// NATS users per role for one operator (a nats-server `users` block), each
// allowed exactly what its code sends (ADR 0015):
// - the subjects it publishes, its operator's only where they carry the
//   operator's name (work, status, dead letters, outcomes, leases, agreements),
//   and the events of the resources its operator declares only;
// - fetch, info and ack on its own durable consumers, one per partition —
//   never creating, changing or deleting one (the topology step does, as admin);
// - ephemeral reads (one-pass.ts, tail's ordered consumer) only on the limits streams and buckets it
//   reads: an ack there removes nothing, and no kubebus durable lives there;
// - no STREAM.CREATE, UPDATE or DELETE at all (an operator's `setup` keeps
//   its external state in an account of its own, stateAccountOf), and PURGE
//   only of the reconciler's own ctx.once bucket (a gone object's records).
import {
  Buckets,
  performedBucketOf,
  Streams,
  agreementKeys,
  durableNames,
  originToken,
  origins,
  subjects,
} from '@kubebus/shared/bus';
import { DEFAULT_STATUS_PARTITIONS } from '@kubebus/shared/config';
import { declaredResources, type Operator } from '@kubebus/shared/definition';
import { partitionsOf, type Role } from '../host/role-configs.js';
import { natsUserOf, passwordVariableOf } from './names.js';
import {
  STATE_ACCOUNT_LIMITS,
  accountJetStream,
  type JetStreamLimits,
} from './nats-account-limits.js';

/**
 * KUBEBUS_STATUS_PARTITIONS' default: the status writer's consumers are
 * permitted one by one, so a different count needs the users generated for it.
 */
export const STATUS_PARTITIONS = DEFAULT_STATUS_PARTITIONS;

/** Account and stream info, reading messages by sequence or subject. */
export const JETSTREAM_READ = [
  '$JS.API.INFO',
  '$JS.API.STREAM.INFO.>',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.LIST',
  '$JS.API.STREAM.MSG.GET.>',
  '$JS.API.DIRECT.GET.>',
];

const kv = (bucket: string) => `KV_${bucket}`;

/** The subjects of the operator's work partitions: what its consumers take. */
function workPartitionsOf(operator: Operator): string[] {
  return range(partitionsOf(operator)).map((p) => subjects.workOfPartition(operator.name, p));
}

/** The limits streams and buckets: reading them through a consumer takes nothing away. */
export const READABLE_STREAMS = [
  Streams.events,
  Streams.outcomes,
  Streams.deadLetters,
  ...Object.values(Buckets).map(kv),
];

/**
 * Ephemeral consumers on `streams`: created (the old API takes ephemerals
 * only; the new one names them in the subject), asked for info and fetched from.
 */
export function orderedReadsOf(streams: readonly string[]): string[] {
  return streams.flatMap((stream) => [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
  ]);
}

/** Fetch, info and ack on the given durable consumers of `stream`, and nothing else of them. */
export function durableUseOf(stream: string, durables: readonly string[]): string[] {
  return durables.flatMap((durable) => [
    `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    `$JS.ACK.${stream}.${durable}.>`,
  ]);
}

/** Nobody but admin creates a durable the old way, or deletes a consumer. */
const CONSUMER_DENY = ['$JS.API.CONSUMER.DURABLE.CREATE.>', '$JS.API.CONSUMER.DELETE.>'];

export interface Permissions {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

const range = (n: number) => Array.from({ length: n }, (_, partition) => partition);

/**
 * An operator with `setup` keeps its external state (object stores, KV
 * buckets) in an account of its own: its reconciler connects there a second
 * time (KUBEBUS_STATE_NATS_USER) and may do anything in it, since a stream
 * created there — RePublish included — reaches only that account's subjects.
 * In kubebus' account, permissions cannot see a stream's configuration, so no
 * runtime user may create a stream at all (ADR 0015).
 */
export function stateUserOf(operator: Operator): string {
  return `${operator.name}-state`;
}

export function stateAccountName(operator: Operator): string {
  return `KUBEBUS_STATE_${operator.name.toUpperCase().replace(/-/g, '_')}`;
}

/** The state account's block inside `accounts { … }`; none for an operator without setup. */
export function stateAccountOf(
  operator: Operator,
  user: string = stateUserOf(operator),
  limits: JetStreamLimits = STATE_ACCOUNT_LIMITS,
): string[] {
  if (operator.setup === undefined) return [];
  return [
    `  # ${operator.name}'s external state (setup): nothing of kubebus lives here; bounded`,
    `  ${stateAccountName(operator)} {`,
    ...accountJetStream(limits),
    '    users: [',
    userEntry(user, { allow: ['$JS.API.>', '$O.>', '$KV.>'], deny: [] }).replace(/^/gm, '    '),
    '    ]',
    '  }',
  ];
}

/** The event subjects of the resources the operator declares (for, owns, watches): what its watcher records. */
export function eventsOf(operator: Operator): string[] {
  return [
    ...new Set(
      declaredResources(operator).map((resource) =>
        subjects.eventsOf({ group: resource.group, resource: resource.plural }),
      ),
    ),
  ];
}

export function publishOf(
  operator: Operator,
  role: Role,
  statusPartitions = STATUS_PARTITIONS,
): Permissions {
  const name = operator.name;
  const own = agreementKeys.of(name);
  switch (role) {
    case 'watcher':
      return {
        allow: [
          ...JETSTREAM_READ,
          ...orderedReadsOf([Streams.events, kv(Buckets.cursors), kv(Buckets.agreements)]),
          // the changes of what it watches only: another operator's primary is not its to record
          ...eventsOf(operator),
          // its partitions' marks only: a subject no consumer takes would fill the work stream
          ...workPartitionsOf(operator),
          // its own letters and cursors only (ADR 0015)
          `kubebus.dlq.${originToken(origins.watcher(name))}.>`,
          `$KV.${Buckets.cursors}.${name}.>`,
          `$KV.${Buckets.agreements}.${own}`,
        ],
        deny: CONSUMER_DENY,
      };
    case 'reconciler':
      return {
        allow: [
          ...JETSTREAM_READ,
          ...orderedReadsOf([
            Streams.events,
            Streams.outcomes,
            Streams.deadLetters,
            kv(Buckets.leases),
            kv(Buckets.agreements),
          ]),
          ...durableUseOf(Streams.work, [
            ...range(partitionsOf(operator)).map((p) => durableNames.work(name, p)),
            // the requeues waiting for their time (later-requeues.ts)
            durableNames.later(name),
          ]),
          // its own work only: the upgrade sweep marks its objects again (upgrade-sweep.ts),
          // requeues wait on kubebus.work.<operator>.later.>; only subjects a consumer takes,
          // so what it stores is taken (junk there would fill the stream and stop every operator)
          ...workPartitionsOf(operator),
          subjects.laterOf(name),
          ...range(statusPartitions).map((p) => subjects.statusOfPartition(name, p)),
          `kubebus.dlq.${originToken(origins.reconciler(name))}.>`,
          `kubebus.outcomes.${originToken(origins.reconciler(name))}.>`,
          `$KV.${Buckets.leases}.${own}`,
          `$KV.${Buckets.agreements}.${own}`,
          // which deliveries of its work it answered (answered-deliveries.ts)
          `$KV.${Buckets.deliveries}.${own}`,
          // the external calls (ctx.once) it made, in its own bucket; a gone object's purged (ADR 0035)
          `$KV.${performedBucketOf(name)}.>`,
          `$JS.API.STREAM.PURGE.KV_${performedBucketOf(name)}`,
        ],
        deny: [subjects.allEvents, ...CONSUMER_DENY],
      };
    case 'status-writer':
      return {
        allow: [
          ...JETSTREAM_READ,
          ...orderedReadsOf([Streams.events, kv(Buckets.leases), kv(Buckets.agreements)]),
          ...durableUseOf(
            Streams.status,
            range(statusPartitions).map((p) => durableNames.status(name, p)),
          ),
          // its own operator's letters and outcomes only (ADR 0015)
          `kubebus.dlq.${originToken(origins.statusWriter(name))}.>`,
          `kubebus.outcomes.${originToken(origins.statusWriter(name))}.>`,
          `$KV.${Buckets.leases}.${own}`,
          `$KV.${Buckets.agreements}.${own}`,
        ],
        deny: CONSUMER_DENY,
      };
  }
}

/** The user for people: status, history, tail, lag, dlq list/inspect — reads only. */
export function cliPermissions(): Permissions {
  return {
    allow: [
      ...JETSTREAM_READ,
      ...orderedReadsOf(READABLE_STREAMS),
      // `kubebus lag`: every consumer's numbers
      '$JS.API.CONSUMER.LIST.*',
      '$JS.API.CONSUMER.NAMES.*',
      `$JS.API.CONSUMER.INFO.${Streams.work}.*`,
      `$JS.API.CONSUMER.INFO.${Streams.status}.*`,
    ],
    deny: CONSUMER_DENY,
  };
}

/** The user for people who re-drive dead letters: reads, sending work back, removing the letter. */
export function dlqAdminPermissions(): Permissions {
  const read = cliPermissions();
  return {
    allow: [
      ...read.allow,
      subjects.allWork,
      subjects.allStatus,
      `$JS.API.STREAM.MSG.DELETE.${Streams.deadLetters}`,
    ],
    deny: read.deny,
  };
}

const list = (subjects: readonly string[]) =>
  subjects.map((subject) => JSON.stringify(subject)).join(', ');

/** One entry of a nats-server `users` list, its password from the environment. */
export function userEntry(user: string, publish: Permissions, comment?: string): string {
  return [
    '  {',
    ...(comment === undefined ? [] : [`    # ${comment}`]),
    `    user: ${JSON.stringify(user)}, password: $${passwordVariableOf(user)}`,
    '    permissions: {',
    `      publish: { allow: [${list(publish.allow)}]${publish.deny.length > 0 ? `, deny: [${list(publish.deny)}]` : ''} }`,
    '      subscribe: { allow: ["_INBOX.>"] }',
    '    }',
    '  }',
  ].join('\n');
}

export function operatorUserEntries(
  operator: Operator,
  roles: readonly Role[],
  userOf: (role: Role) => string = (role) => natsUserOf(operator, role),
): string[] {
  return roles.map((role) => userEntry(userOf(role), publishOf(operator, role)));
}

/**
 * Every user of the kubebus account: admin (the topology step), the
 * operator's roles, cli and dlq-admin. `userOf` names the roles' users
 * (deploy/nats/nats-server.conf names them by role alone).
 */
export function accountUserEntries(
  operator: Operator,
  roles: readonly Role[],
  userOf?: (role: Role) => string,
): string[] {
  return [
    userEntry(
      'admin',
      { allow: ['$JS.API.>'], deny: [] },
      "the topology step: creates and updates the streams, buckets and operators' durable consumers",
    ),
    ...operatorUserEntries(operator, roles, userOf),
    userEntry('cli', cliPermissions(), 'for people: status, history, tail, lag, dlq list/inspect'),
    userEntry(
      'dlq-admin',
      dlqAdminPermissions(),
      're-drives dead letters: sends work back, removes the re-driven letter',
    ),
  ];
}

export function natsUsersOf(operator: Operator, roles: readonly Role[]): string {
  return [
    `# NATS users of operator ${operator.name}, one per role (kubebus generate).`,
    '# Add them to the users of the kubebus account; passwords come from the environment.',
    '# None may create, change or delete streams or the durable consumers of the work: run',
    '# `kubebus topology apply <operator>` first, as a user allowed "$JS.API.>"',
    '# (the admin user of the generated nats/nats-server.conf).',
    'users: [',
    ...operatorUserEntries(operator, roles),
    ']',
    '',
  ].join('\n');
}
