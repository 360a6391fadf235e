// NATS users per role for one operator (a nats-server `users` block): each
// publishes only to the kubebus subjects its code sends to. The JetStream API
// stays open except for deleting and purging: every service still ensures
// the streams at start (until a separate topology step owns that).
import type { Operator } from '../api/operator.js';
import type { Role } from '../host/role-configs.js';

const DESTRUCTIVE = [
  '$JS.API.STREAM.DELETE.>',
  '$JS.API.STREAM.PURGE.>',
  '$JS.API.STREAM.MSG.DELETE.>',
];

function publishAllowOf(operator: Operator, role: Role): string[] {
  switch (role) {
    case 'watcher':
      return [
        '$JS.API.>',
        'kubebus.events.>',
        `kubebus.work.${operator.name}.>`,
        'kubebus.dlq.watcher.>',
        '$KV.kubebus_cursors.>',
        '$KV.kubebus_agreements.>',
        '$JS.ACK.KUBEBUS_EVENTS.>',
      ];
    case 'reconciler':
      return [
        '$JS.API.>',
        '$JS.ACK.KUBEBUS_WORK.>',
        '$KV.kubebus_leases.>',
        '$KV.kubebus_agreements.>',
        'kubebus.status.>',
        `kubebus.dlq.${operator.name}.>`,
        `kubebus.outcomes.${operator.name}.>`,
      ];
    case 'status-writer':
      return [
        '$JS.API.>',
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
      `      publish: { allow: [${list(publishAllowOf(operator, role))}], deny: [${list(DESTRUCTIVE)}] }`,
      '      subscribe: { allow: ["_INBOX.>"] }',
      '    }',
      '  }',
    ].join('\n');
  });
  return [
    `# NATS users of operator ${operator.name}, one per role (kubebus generate).`,
    '# Add them to the users of the kubebus account; passwords come from the environment.',
    'users: [',
    ...users,
    ']',
    '',
  ].join('\n');
}
