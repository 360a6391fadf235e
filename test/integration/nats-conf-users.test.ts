// deploy/nats/nats-server.conf (docker compose, the NATS-auth end-to-end
// test) spells out the users `kubebus generate` derives for the DatabaseCluster
// operator, its role users named by role alone: this keeps the two equal, so
// what the end-to-end test proves of one holds for the other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import databaseCluster from '../../examples/databasecluster/operator.js';
import {
  accountUserEntries,
  stateAccountOf,
} from '../../packages/kubebus/src/generate/nats-users.js';
import {
  KUBEBUS_ACCOUNT_LIMITS,
  SERVER_STORES,
  accountJetStream,
} from '../../packages/kubebus/src/generate/nats-account-limits.js';
import { ROLES } from '../../packages/kubebus/src/host/role-configs.js';

const conf = readFileSync(
  fileURLToPath(new URL('../../deploy/nats/nats-server.conf', import.meta.url)),
  'utf8',
);

describe('deploy/nats/nats-server.conf', () => {
  it("holds the generated users of the DatabaseCluster operator's roles, cli, dlq-admin and admin", () => {
    const generated = accountUserEntries(databaseCluster, ROLES, (role) => role)
      .map((entry) => entry.replace(/^/gm, '    '))
      .join('\n');
    const users = conf.slice(conf.indexOf('    users: [\n') + '    users: [\n'.length);
    // equal, without printing two 15 KB blocks when not
    assert.ok(
      users.slice(0, users.indexOf('\n    ]\n  }')) === generated,
      'regenerate its users block from nats-users.ts (see the comment above it)',
    );
  });

  it("holds the operator's state account, its user named after the reconciler", () => {
    const state = stateAccountOf(databaseCluster, 'reconciler-state').join('\n');
    assert.ok(state.length > 0, 'the example keeps backups in object stores: it has setup');
    assert.ok(
      conf.includes(`  }\n${state}\n}\n`),
      'regenerate its state account from nats-users.ts',
    );
  });

  it("bounds JetStream as the generator does: the server's stores and kubebus' account", () => {
    assert.match(conf, new RegExp(`\\n  max_file_store: ${SERVER_STORES.maxFileStore}\\n`));
    assert.match(conf, new RegExp(`\\n  max_memory_store: ${SERVER_STORES.maxMemoryStore}\\n`));
    assert.ok(
      conf.includes(`  KUBEBUS {\n${accountJetStream(KUBEBUS_ACCOUNT_LIMITS).join('\n')}\n`),
      "regenerate the KUBEBUS account's jetstream block from nats-account-limits.ts",
    );
  });
});
