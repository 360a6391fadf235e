// A whole nats-server configuration for one operator: JetStream on file
// storage with bounded stores, one account with JetStream limits, the admin user the topology step runs as, the
// operator's users per role (nats-users.ts), and the two users for people:
// `cli` reads, `dlq-admin` re-drives dead letters.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { KUBEBUS_ACCOUNT_LIMITS, SERVER_STORES, accountJetStream } from './nats-account-limits.js';
import { mountedTlsFiles, transportSection } from './nats-tls-config.js';
import { accountUserEntries, stateAccountOf } from './nats-users.js';

export function natsServerConfigOf(operator: Operator, roles: readonly Role[]): string {
  return [
    `# nats-server for kubebus and operator ${operator.name} (kubebus generate; do not edit).`,
    '# Passwords come from the environment (the NATS credentials Secret). sync_interval:',
    '# always is the durable profile (fsync every write). Only `admin` may create, update',
    '# or delete streams: the topology step runs as admin; the roles read and consume.',
    '# Clients speak TLS only (the Secret nats-tls, from cert-manager: see cert-manager/).',
    ...transportSection(mountedTlsFiles),
    'max_payload: 1MB',
    '',
    'jetstream {',
    '  store_dir: /data/jetstream',
    '  sync_interval: always',
    '  # below the 10Gi volume and the 1Gi memory limit; each account bounded within (nats-account-limits.ts)',
    `  max_file_store: ${SERVER_STORES.maxFileStore}`,
    `  max_memory_store: ${SERVER_STORES.maxMemoryStore}`,
    '}',
    '',
    'accounts {',
    '  KUBEBUS {',
    ...accountJetStream(KUBEBUS_ACCOUNT_LIMITS),
    '    users: [',
    ...accountUserEntries(operator, roles).map((entry) => entry.replace(/^/gm, '    ')),
    '    ]',
    '  }',
    ...stateAccountOf(operator),
    '}',
    '',
  ].join('\n');
}
