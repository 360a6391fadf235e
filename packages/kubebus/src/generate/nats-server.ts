// A whole nats-server configuration for one operator: JetStream on file
// storage, one account, the admin user the topology step runs as, the
// operator's users per role (nats-users.ts), and the two users for people:
// `cli` reads, `dlq-admin` re-drives dead letters.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { Streams } from '@kubebus/shared/bus';
import { JETSTREAM_READ, operatorUserEntries, userEntry } from './nats-users.js';

export function natsServerConfigOf(operator: Operator, roles: readonly Role[]): string {
  return [
    `# nats-server for kubebus and operator ${operator.name} (kubebus generate; do not edit).`,
    '# Passwords come from the environment (the NATS credentials Secret). sync_interval:',
    '# always is the durable profile (fsync every write). Only `admin` may create, update',
    '# or delete streams: the topology step runs as admin; the roles read and consume.',
    'listen: 0.0.0.0:4222',
    'http: 0.0.0.0:8222',
    'max_payload: 1MB',
    '',
    'jetstream {',
    '  store_dir: /data/jetstream',
    '  sync_interval: always',
    '}',
    '',
    'accounts {',
    '  KUBEBUS {',
    '    jetstream: enabled',
    '    users: [',
    ...[
      userEntry(
        'admin',
        { allow: ['$JS.API.>'], deny: [] },
        'the topology step: creates and updates the streams and buckets',
      ),
      ...operatorUserEntries(operator, roles),
      userEntry(
        'cli',
        { allow: JETSTREAM_READ, deny: [] },
        'for people: status, history, tail, lag, dlq list/inspect (reads only)',
      ),
      userEntry(
        'dlq-admin',
        {
          allow: [
            ...JETSTREAM_READ,
            'kubebus.work.>',
            'kubebus.status.>',
            `$JS.API.STREAM.MSG.DELETE.${Streams.deadLetters}`,
          ],
          deny: [],
        },
        're-drives dead letters: sends work back, removes the re-driven letter',
      ),
    ].map((entry) => entry.replace(/^/gm, '    ')),
    '    ]',
    '  }',
    '}',
    '',
  ].join('\n');
}
