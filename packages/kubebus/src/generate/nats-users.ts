// NATS users per role for one operator (a nats-server `users` block): each
// publishes only to the kubebus subjects its code sends to, and asks the
// JetStream API only to read and to consume — no STREAM.CREATE, UPDATE,
// DELETE or PURGE: `kubebus topology apply`, run as an admin user, owns the
// streams and buckets.
import type { Operator } from '../api/operator.js';
import type { Role } from '../host/role-configs.js';

/** Account and stream info, reading messages, consumers. */
const JETSTREAM_READ = [
  '$JS.API.INFO',
  '$JS.API.STREAM.INFO.>',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.LIST',
  '$JS.API.STREAM.MSG.GET.>',
  '$JS.API.DIRECT.GET.>',
  '$JS.API.CONSUMER.>',
];

function publishAllowOf(operator: Operator, role: Role): string[] {
  switch (role) {
    case 'watcher':
      return [
        ...JETSTREAM_READ,
        'kubebus.events.>',
        `kubebus.work.${operator.name}.>`,
        'kubebus.dlq.watcher.>',
        '$KV.kubebus_cursors.>',
        '$KV.kubebus_agreements.>',
        '$JS.ACK.KUBEBUS_EVENTS.>',
      ];
    case 'reconciler':
      return [
        ...JETSTREAM_READ,
        '$JS.ACK.KUBEBUS_WORK.>',
        '$KV.kubebus_leases.>',
        '$KV.kubebus_agreements.>',
        'kubebus.status.>',
        `kubebus.dlq.${operator.name}.>`,
        `kubebus.outcomes.${operator.name}.>`,
      ];
    case 'status-writer':
      return [
        ...JETSTREAM_READ,
        '$JS.ACK.KUBEBUS_STATUS.>',
        '$KV.kubebus_leases.>',
        '$KV.kubebus_agreements.>',
        'kubebus.dlq.status-writer.>',
        'kubebus.outcomes.status-writer.>',
      ];
  }
}

export function natsUsersOf(operator: Operator, roles: readonly Role[]): string {
  const list = (subjects: readonly string[]) =>
    subjects.map((subject) => JSON.stringify(subject)).join(', ');
  const users = roles.map((role) => {
    const user = `${operator.name}-${role}`;
    const variable = `KUBEBUS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
    return [
      '  {',
      `    user: ${JSON.stringify(user)}, password: $${variable}`,
      '    permissions: {',
      `      publish: { allow: [${list(publishAllowOf(operator, role))}] }`,
      '      subscribe: { allow: ["_INBOX.>"] }',
      '    }',
      '  }',
    ].join('\n');
  });
  return [
    `# NATS users of operator ${operator.name}, one per role (kubebus generate).`,
    '# Add them to the users of the kubebus account; passwords come from the environment.',
    '# None may create or change streams: run `kubebus topology apply` first, as a user',
    '# allowed "$JS.API.>" (the admin user of deploy/nats/nats-server.conf).',
    'users: [',
    ...users,
    ']',
    '',
  ].join('\n');
}
