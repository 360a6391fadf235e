// The pipeline with one NATS user per service, as deploy/nats/nats-server.conf
// defines them: the topology step runs as admin, everything works within the
// allow lists, and no service or CLI user can step outside its own — none
// may create, update or delete kubebus' streams.
import {
  Buckets,
  Streams,
  defaultTopology,
  isPermissionRefusal,
  streamConfigs,
  subjects,
} from '@kubebus/shared/bus';
import type { NatsConnection } from '@nats-io/nats-core';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import { waitFor } from '../support/wait.js';

const conf = readFileSync(
  fileURLToPath(new URL('../../deploy/nats/nats-server.conf', import.meta.url)),
  'utf8',
);
const accounts = conf.slice(conf.indexOf('accounts {'));
const passwords = {
  KUBEBUS_WATCHER_PASSWORD: 'watcher-secret',
  KUBEBUS_RECONCILER_PASSWORD: 'reconciler-secret',
  KUBEBUS_STATUS_WRITER_PASSWORD: 'status-writer-secret',
  KUBEBUS_CLI_PASSWORD: 'cli-secret',
  KUBEBUS_ADMIN_PASSWORD: 'admin-secret',
  KUBEBUS_DLQ_ADMIN_PASSWORD: 'dlq-admin-secret',
};
const users = {
  watcher: passwords.KUBEBUS_WATCHER_PASSWORD,
  reconciler: passwords.KUBEBUS_RECONCILER_PASSWORD,
  'status-writer': passwords.KUBEBUS_STATUS_WRITER_PASSWORD,
  cli: passwords.KUBEBUS_CLI_PASSWORD,
  'dlq-admin': passwords.KUBEBUS_DLQ_ADMIN_PASSWORD,
};
const key = {
  group: 'example.kubebus.dev',
  resource: 'databaseclusters',
  namespace: 'authz',
  name: 'guarded',
};
const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };

/** The kubebus CLI as one NATS user. */
function cli(user: string, password: string, args: readonly string[]) {
  return spawnSync(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', ...args],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        KUBEBUS_NATS_URL: bedUrl(),
        KUBEBUS_NATS_USER: user,
        KUBEBUS_NATS_PASSWORD: password,
      },
      timeout: 60_000,
    },
  );
}
let bedUrl = () => '';

describe('one NATS user per service', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let pipeline: Pipeline;

  before(async () => {
    bed = await TestBed.start({ nats: { extraConfig: accounts, env: passwords } });
    bedUrl = () => bed.natsUrl;
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    // before the topology step: the watcher may not create the streams, says so, and waits
    const watcher = await pipeline.watcher(
      {
        KUBEBUS_NATS_USER: 'watcher',
        KUBEBUS_NATS_PASSWORD: passwords.KUBEBUS_WATCHER_PASSWORD,
      },
      { waitReady: false },
    );
    await waitFor(
      () =>
        watcher
          .logs()
          .some((line) =>
            /^waiting for KUBEBUS_EVENTS.*run `kubebus topology apply`/.test(String(line['msg'])),
          ),
      'the watcher to say it waits for the topology step',
    );
    assert.equal((await watcher.get('/readyz')).status, 503, 'not ready without its streams');
    const applied = cli('admin', passwords.KUBEBUS_ADMIN_PASSWORD, ['topology', 'apply']);
    assert.equal(applied.status, 0, applied.stderr);
    assert.match(applied.stdout, /^KUBEBUS_EVENTS +created/m);
    await watcher.waitReady();
    await pipeline.reconciler({
      KUBEBUS_NATS_USER: 'reconciler',
      KUBEBUS_NATS_PASSWORD: passwords.KUBEBUS_RECONCILER_PASSWORD,
    });
    await pipeline.statusWriter({
      KUBEBUS_NATS_USER: 'status-writer',
      KUBEBUS_NATS_PASSWORD: passwords.KUBEBUS_STATUS_WRITER_PASSWORD,
    });
  });

  after(async () => {
    await pipeline.stop();
    await bed.stop();
  });

  it('runs a DatabaseCluster to its status with each service under its own user', async () => {
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'authz' } } });
    const custom = bed.kubeConfig().makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...target,
      namespace: 'authz',
      body: {
        apiVersion: `${target.group}/${target.version}`,
        kind: 'DatabaseCluster',
        metadata: { name: 'guarded' },
        spec: { engine: 'postgres', version: '16', storage: { size: '1Gi' } },
      },
    });
    await waitFor(
      async () => {
        const cluster = (await custom.getNamespacedCustomObject({
          ...target,
          namespace: 'authz',
          name: 'guarded',
        })) as {
          metadata: { generation: number };
          status?: { observedGeneration?: number };
        };
        return cluster.status?.observedGeneration === cluster.metadata.generation;
      },
      'the cluster to converge',
      60_000,
    );
  });

  it('refuses what a service may not do', async () => {
    const statusWriter = await connect({
      servers: bed.natsUrl,
      user: 'status-writer',
      pass: passwords.KUBEBUS_STATUS_WRITER_PASSWORD,
    });
    try {
      await assert.rejects(
        jetstream(statusWriter).publish(subjects.event(key), '{}', { timeout: 2_000 }),
        'the status writer may not forge events',
      );
      await assert.rejects(
        (await jetstreamManager(statusWriter)).streams.delete(Streams.events),
        'the status writer may not delete streams',
      );
    } finally {
      await statusWriter.close();
    }
    const watcher = await connect({
      servers: bed.natsUrl,
      user: 'watcher',
      pass: passwords.KUBEBUS_WATCHER_PASSWORD,
    });
    try {
      await assert.rejects(
        jetstream(watcher).publish(subjects.status(0, key), '{}', { timeout: 2_000 }),
        'the watcher may not write status intents',
      );
    } finally {
      await watcher.close();
    }
    await assert.rejects(
      connect({ servers: bed.natsUrl, user: 'watcher', pass: 'wrong' }),
      'a wrong password is refused',
    );
  });

  it('lets only the admin user change the topology, and only dlq-admin re-drive', async () => {
    const refused = (error: unknown) => isPermissionRefusal(error);
    const as = async <T>(user: keyof typeof users, use: (nc: NatsConnection) => Promise<T>) => {
      const nc = await connect({ servers: bed.natsUrl, user, pass: users[user] });
      try {
        return await use(nc);
      } finally {
        await nc.close();
      }
    };
    const work = streamConfigs(defaultTopology).find(({ name }) => name === Streams.work);
    assert.ok(work);
    for (const user of ['watcher', 'reconciler', 'status-writer', 'cli', 'dlq-admin'] as const) {
      await as(user, async (nc) => {
        const jsm = await jetstreamManager(nc);
        await assert.rejects(
          jsm.streams.update(Streams.work, { ...work, max_age: 1_000_000_000 }),
          refused,
          `${user} updated a stream`,
        );
        await assert.rejects(
          jsm.streams.delete(Streams.events),
          refused,
          `${user} deleted a stream`,
        );
        await assert.rejects(
          jsm.streams.purge(Streams.deadLetters),
          refused,
          `${user} purged the DLQ`,
        );
        await assert.rejects(
          jsm.streams.delete(`KV_${Buckets.leases}`),
          refused,
          `${user} deleted a bucket`,
        );
        // reading is allowed to all of them
        assert.equal((await jsm.streams.info(Streams.events)).config.name, Streams.events);
      });
    }
    // the reading CLI user may not send work or remove letters; dlq-admin may (the
    // server answers it: the letter does not exist, which is not a refusal)
    await as('cli', async (nc) => {
      await assert.rejects(
        jetstream(nc).publish(subjects.work('databasecluster', 0, key), '{}', { timeout: 2_000 }),
        refused,
      );
      await assert.rejects(
        (await jetstreamManager(nc)).streams.deleteMessage(Streams.deadLetters, 999_999),
        refused,
      );
    });
    await as('dlq-admin', async (nc) => {
      await assert.rejects(
        (await jetstreamManager(nc)).streams.deleteMessage(Streams.deadLetters, 999_999),
        (error: unknown) => !isPermissionRefusal(error),
      );
    });
    // the reading CLI works, and says the topology is as declared
    const check = cli('cli', users.cli, ['topology', 'check']);
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.doesNotMatch(check.stdout, /missing|differs/);
  });

  it('stays up and not ready on a wrong password, says so in one line, and recovers when the password file changes', async () => {
    const passwordFile = join(bed.dir, 'reconciler-password');
    writeFileSync(passwordFile, 'wrong\n');
    const service = await pipeline.reconciler(
      { KUBEBUS_NATS_USER: 'reconciler', KUBEBUS_NATS_PASSWORD_FILE: passwordFile },
      { waitReady: false },
    );
    await waitFor(
      () =>
        service
          .logs()
          .some((line) =>
            /^NATS refused user reconciler: .*authorization violation/i.test(String(line['msg'])),
          ),
      'the refusal to be logged',
    );
    assert.equal(service.process.exitCode, undefined, 'still running');
    assert.equal((await service.get('/healthz')).status, 200, 'alive');
    assert.equal((await service.get('/readyz')).status, 503, 'not ready');
    // A mounted Secret changes in place: the next attempt reads the new password.
    writeFileSync(passwordFile, `${passwords.KUBEBUS_RECONCILER_PASSWORD}\n`);
    await service.waitReady();
  });
});
