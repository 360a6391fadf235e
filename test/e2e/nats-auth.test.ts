// The pipeline with one NATS user per service, as deploy/nats/nats-server.conf
// defines them: everything works within the allow lists, and a service cannot
// step outside its own.
import { Streams, subjects } from '@kubebus/shared/bus';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
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
};
const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };

describe('one NATS user per service', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let pipeline: Pipeline;

  before(async () => {
    bed = await TestBed.start({ nats: { extraConfig: accounts, env: passwords } });
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    await pipeline.watcher({
      KUBEBUS_NATS_USER: 'watcher',
      KUBEBUS_NATS_PASSWORD: passwords.KUBEBUS_WATCHER_PASSWORD,
    });
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
    const key = {
      group: 'example.kubebus.dev',
      resource: 'databaseclusters',
      namespace: 'authz',
      name: 'guarded',
    };
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
