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
});
