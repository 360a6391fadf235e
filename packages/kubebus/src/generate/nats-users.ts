// NATS users per role for one operator (a nats-server `users` block): each
// publishes only to the kubebus subjects its code sends to, and asks the
// JetStream API only to read and to consume — no STREAM.CREATE, UPDATE,
// DELETE or PURGE of kubebus' streams: `kubebus topology apply`, run as an
// admin user, owns the streams and buckets.
import { Buckets, Streams } from '@kubebus/shared/bus';
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { natsUserOf, passwordVariableOf } from './names.js';

/** Account and stream info, reading messages, consumers. */
export const JETSTREAM_READ = [
  '$JS.API.INFO',
  '$JS.API.STREAM.INFO.>',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.LIST',
  '$JS.API.STREAM.MSG.GET.>',
  '$JS.API.DIRECT.GET.>',
  '$JS.API.CONSUMER.>',
];

/** kubebus' own streams, KV buckets included (KV_<bucket>). */
const KUBEBUS_STREAMS = [
  ...Object.values(Streams),
  ...Object.values(Buckets).map((bucket) => `KV_${bucket}`),
];

export interface Permissions {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

/**
 * An operator with `setup` gets the process's NATS connection for external
 * state (object stores, KV buckets): its reconciler may create and delete
 * streams of its own. NATS wildcards match whole tokens only, so kubebus'
 * streams are denied by name, and the watcher's cursors stay its own.
 */
function externalState(operator: Operator): Permissions {
  if (operator.setup === undefined) return { allow: [], deny: [] };
  return {
    allow: ['$JS.API.STREAM.CREATE.*', '$JS.API.STREAM.DELETE.*', '$O.>', '$KV.>'],
    deny: [
      ...KUBEBUS_STREAMS.flatMap((stream) =>
        ['CREATE', 'UPDATE', 'DELETE', 'PURGE'].map((verb) => `$JS.API.STREAM.${verb}.${stream}`),
      ),
      `$KV.${Buckets.cursors}.>`,
    ],
  };
}

export function publishOf(operator: Operator, role: Role): Permissions {
  switch (role) {
    case 'watcher':
      return {
        allow: [
          ...JETSTREAM_READ,
          'kubebus.events.>',
          `kubebus.work.${operator.name}.>`,
          'kubebus.dlq.watcher.>',
          `$KV.${Buckets.cursors}.>`,
          `$KV.${Buckets.agreements}.>`,
          `$JS.ACK.${Streams.events}.>`,
        ],
        deny: [],
      };
    case 'reconciler': {
      const external = externalState(operator);
      return {
        allow: [
          ...JETSTREAM_READ,
          `$JS.ACK.${Streams.work}.>`,
          `$KV.${Buckets.leases}.>`,
          `$KV.${Buckets.agreements}.>`,
          // its own work only: the upgrade sweep marks its objects again (upgrade-sweep.ts)
          `kubebus.work.${operator.name}.>`,
          'kubebus.status.>',
          `kubebus.dlq.${operator.name}.>`,
          `kubebus.outcomes.${operator.name}.>`,
          ...external.allow,
        ],
        deny: ['kubebus.events.>', ...external.deny],
      };
    }
    case 'status-writer':
      return {
        allow: [
          ...JETSTREAM_READ,
          `$JS.ACK.${Streams.status}.>`,
          `$KV.${Buckets.leases}.>`,
          `$KV.${Buckets.agreements}.>`,
          'kubebus.dlq.status-writer.>',
          'kubebus.outcomes.status-writer.>',
        ],
        deny: [],
      };
  }
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

export function operatorUserEntries(operator: Operator, roles: readonly Role[]): string[] {
  return roles.map((role) => userEntry(natsUserOf(operator, role), publishOf(operator, role)));
}

export function natsUsersOf(operator: Operator, roles: readonly Role[]): string {
  return [
    `# NATS users of operator ${operator.name}, one per role (kubebus generate).`,
    '# Add them to the users of the kubebus account; passwords come from the environment.',
    '# None may create or change streams: run `kubebus topology apply` first, as a user',
    '# allowed "$JS.API.>" (the admin user of the generated nats/nats-server.conf).',
    'users: [',
    ...operatorUserEntries(operator, roles),
    ']',
    '',
  ].join('\n');
}
