// The pipeline with one NATS user per service, as deploy/nats/nats-server.conf
// defines them (the users `kubebus generate` derives, test/integration/
// nats-conf-users.test.ts keeps them equal): the topology step runs as admin
// and creates the streams and the operator's durable consumers; everything
// works within the allow lists; and every verb a user must not have is
// refused by the real server (ADR 0015) — deleting, creating or changing a
// durable consumer, creating a stream (the RePublish escape), writing another
// operator's status, leases, agreements, outcomes, dead letters, watch
// cursors, delivery records or records of external calls, forging events.
import {
  Buckets,
  Streams,
  agreementKeys,
  defaultTopology,
  durableNames,
  isPermissionRefusal,
  leaseGroups,
  leaseKey,
  origins,
  performedBucketOf,
  readOutcomes,
  streamConfigs,
  subjects,
} from '@kubebus/shared/bus';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, STATUS_PARTITIONS, installDatabaseClusterCrd } from '../support/pipeline.js';
import { DATABASE_CLUSTER_OPERATOR } from '../support/services.js';
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
  KUBEBUS_RECONCILER_STATE_PASSWORD: 'reconciler-state-secret',
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

/**
 * The consumers' settings the topology step creates them with: those the
 * pipeline's reconcilers and status writers run with (test/support/pipeline.ts).
 */
const ROLE_SETTINGS = { KUBEBUS_STATUS_PARTITIONS: STATUS_PARTITIONS, KUBEBUS_ACK_WAIT: '5s' };
const OPERATOR = 'databasecluster';
/** The reconciler's second user: the operator's state account (its backups' object stores). */
const STATE_USER = {
  KUBEBUS_STATE_NATS_USER: 'reconciler-state',
  KUBEBUS_STATE_NATS_PASSWORD: passwords.KUBEBUS_RECONCILER_STATE_PASSWORD,
};
const OTHER = 'widgets';

/** The kubebus CLI as one NATS user. */
function cli(
  user: string,
  password: string,
  args: readonly string[],
  extraEnv: Readonly<Record<string, string>> = {},
) {
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
        ...extraEnv,
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
    // streams but no consumers or performed bucket yet: the reconciler may not create its own, says so, and waits
    const reconciler = await pipeline.reconciler(
      {
        KUBEBUS_NATS_USER: 'reconciler',
        KUBEBUS_NATS_PASSWORD: passwords.KUBEBUS_RECONCILER_PASSWORD,
        ...STATE_USER,
      },
      { waitReady: false },
    );
    await waitFor(
      () =>
        reconciler
          .logs()
          .some((line) =>
            /^waiting for (the consumers KUBEBUS_WORK\/databasecluster_p0|KV_kubebus_performed_databasecluster).*run `kubebus topology apply <operator>`.*as the NATS admin/.test(
              String(line['msg']),
            ),
          ),
      'the reconciler to say it waits for its consumers from the topology step',
    );
    assert.equal((await reconciler.get('/readyz')).status, 503, 'not ready without its consumers');
    const consumers = cli(
      'admin',
      passwords.KUBEBUS_ADMIN_PASSWORD,
      ['topology', 'apply', DATABASE_CLUSTER_OPERATOR],
      ROLE_SETTINGS,
    );
    assert.equal(consumers.status, 0, consumers.stderr);
    assert.match(consumers.stdout, /^KUBEBUS_WORK\/databasecluster_p0 +created/m);
    // and its records of external calls (ctx.once, ADR 0035)
    assert.match(consumers.stdout, /^KV_kubebus_performed_databasecluster +created/m);
    assert.match(
      consumers.stdout,
      new RegExp(
        `^KUBEBUS_STATUS/databasecluster_status_p${Number(STATUS_PARTITIONS) - 1} +created`,
        'm',
      ),
    );
    await reconciler.waitReady();
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

  it('refuses every verb a service or person must not have', async () => {
    const refused = (error: unknown) => isPermissionRefusal(error);
    const work = durableNames.work(OPERATOR, 0);
    const status = durableNames.status(OPERATOR, 0);
    const attacks: Record<string, (nc: NatsConnection) => Promise<unknown>> = {
      'delete a durable consumer': async (nc) =>
        (await jetstreamManager(nc)).consumers.delete(Streams.work, work),
      "delete the status writer's durable consumer": async (nc) =>
        (await jetstreamManager(nc)).consumers.delete(Streams.status, status),
      'change a durable consumer': async (nc) =>
        (await jetstreamManager(nc)).consumers.add(Streams.work, {
          durable_name: work,
          filter_subject: subjects.workOfPartition(OPERATOR, 0),
          ack_policy: AckPolicy.Explicit,
          ack_wait: 1_000_000_000,
        }),
      'create a durable consumer that takes the work': async (nc) =>
        (await jetstreamManager(nc)).consumers.add(Streams.work, {
          durable_name: 'rogue',
          filter_subject: subjects.workOf(OTHER),
          ack_policy: AckPolicy.Explicit,
        }),
      'create an ephemeral consumer on the work queue': async (nc) =>
        (await jetstreamManager(nc)).consumers.add(Streams.work, {
          filter_subjects: [subjects.workOf(OTHER)],
          ack_policy: AckPolicy.Explicit,
        }),
      'create a durable consumer the old way': async (nc) =>
        // a filter list takes the old API: $JS.API.CONSUMER.DURABLE.CREATE.<stream>.<name>
        (await jetstreamManager(nc)).consumers.add(Streams.events, {
          durable_name: 'rogue',
          filter_subjects: [subjects.allEvents],
          ack_policy: AckPolicy.None,
        }),
      "pull another operator's work": (nc) =>
        nc.request(
          `$JS.API.CONSUMER.MSG.NEXT.${Streams.work}.${durableNames.work(OTHER, 0)}`,
          JSON.stringify({ batch: 1, expires: 500_000_000 }),
          { timeout: 2_000 },
        ),
      "pull another operator's waiting requeues": (nc) =>
        nc.request(
          `$JS.API.CONSUMER.MSG.NEXT.${Streams.work}.${durableNames.later(OTHER)}`,
          JSON.stringify({ batch: 1, expires: 500_000_000 }),
          { timeout: 2_000 },
        ),
      "park a requeue for another operator's object": (nc) =>
        jetstream(nc).publish(subjects.later(OTHER, key), '{}', { timeout: 2_000 }),
      'create a stream that republishes into kubebus.events': async (nc) =>
        (await jetstreamManager(nc)).streams.add({
          name: 'ESCAPE',
          subjects: ['escape.>'],
          republish: { src: 'escape.>', dest: 'kubebus.events.>' },
        }),
      "write another operator's status": (nc) =>
        jetstream(nc).publish(subjects.status(OTHER, 0, key), '{}', { timeout: 2_000 }),
      "take another operator's lease": async (nc) =>
        (await new Kvm(nc).open(Buckets.leases)).put(
          leaseKey(leaseGroups.work(OTHER), 0),
          'attacker',
        ),
      "rewrite another operator's agreement": async (nc) =>
        (await new Kvm(nc).open(Buckets.agreements)).put(
          agreementKeys.work(OTHER),
          JSON.stringify({ partitions: 1, registeredBy: 'attacker', at: '2026-12-01T00:00:00Z' }),
        ),
      // ADR 0015's last shared subjects: each operator's origins carry its name
      ...Object.fromEntries(
        (['reconciler', 'statusWriter', 'watcher'] as const).flatMap((role) => [
          [
            `forge another operator's ${role} dead letter`,
            (nc: NatsConnection) =>
              jetstream(nc).publish(subjects.deadLetter(origins[role](OTHER), key), '{}', {
                timeout: 2_000,
              }),
          ],
          [
            `forge another operator's ${role} outcome`,
            (nc: NatsConnection) =>
              jetstream(nc).publish(subjects.outcome(origins[role](OTHER), key), '{}', {
                timeout: 2_000,
              }),
          ],
        ]),
      ),
      'forge a dead letter of the shared status-writer origin (before the upgrade)': (nc) =>
        jetstream(nc).publish(subjects.deadLetter('status-writer', key), '{}', { timeout: 2_000 }),
      "move another operator's watch cursor": async (nc) =>
        (await new Kvm(nc).open(Buckets.cursors)).put(
          `${OTHER}.widgets.test_kubebus_dev._all._`,
          JSON.stringify({ resourceVersion: '1', updatedAt: '2026-12-01T00:00:00Z', by: 'x' }),
        ),
      'move a watch cursor of the shared layout (before the upgrade)': async (nc) =>
        (await new Kvm(nc).open(Buckets.cursors)).put(
          'databaseclusters.example_kubebus_dev._all._',
          JSON.stringify({ resourceVersion: '1', updatedAt: '2026-12-01T00:00:00Z', by: 'x' }),
        ),
      // the watcher records the changes of its operator's resources only
      "forge an event of another operator's resource": (nc) =>
        jetstream(nc).publish(
          subjects.event({
            group: 'test.kubebus.dev',
            resource: 'widgets',
            namespace: 'default',
            name: 'forged',
          }),
          '{}',
          { timeout: 2_000 },
        ),
      "clear another operator's delivery records": async (nc) =>
        (await new Kvm(nc).open(Buckets.deliveries)).put(`${OTHER}.0123abcd`, '{}'),
      // a forged record would stop another operator's call (ctx.once) from being made,
      // a purge would make it again
      "record another operator's external call as made": (nc) =>
        jetstream(nc).publish(`$KV.${performedBucketOf(OTHER)}.0123abcd.0123abcd`, '{}', {
          timeout: 2_000,
        }),
      "purge another operator's records of external calls": async (nc) =>
        (await jetstreamManager(nc)).streams.purge(`KV_${performedBucketOf(OTHER)}`),
    };
    // its own operator's, on a subject no consumer takes: stored for ever, the stream
    // full (discard new) and every operator's work refused
    attacks["store work of its own operator's that no consumer takes"] = (nc) =>
      jetstream(nc).publish(`kubebus.work.${OPERATOR}.junk.x`, '{}', { timeout: 2_000 });
    attacks["store a status intent of its own operator's that no consumer takes"] = (nc) =>
      jetstream(nc).publish(`kubebus.status.${OPERATOR}.junk.x`, '{}', { timeout: 2_000 });
    const roleOnly: Record<string, (nc: NatsConnection) => Promise<unknown>> = {
      'forge an event': (nc) =>
        jetstream(nc).publish(subjects.event(key), '{}', { timeout: 2_000 }),
    };
    for (const user of ['watcher', 'reconciler', 'status-writer', 'cli', 'dlq-admin'] as const) {
      const nc = await connect({ servers: bed.natsUrl, user, pass: users[user] });
      try {
        for (const [verb, attack] of Object.entries({
          ...attacks,
          ...(user === 'watcher' ? {} : roleOnly),
        })) {
          // re-driving sends marks and intents back to any operator's work and status
          if (
            user === 'dlq-admin' &&
            (verb.endsWith("another operator's status") ||
              verb.startsWith('park a requeue') ||
              verb.includes('that no consumer takes'))
          )
            continue;
          await assert.rejects(attack(nc), refused, `${user} may ${verb}`);
        }
      } finally {
        await nc.close();
      }
    }
    // the control: each role writes its own letters, outcomes, cursors and records
    const own: Record<
      'watcher' | 'reconciler' | 'status-writer',
      (nc: NatsConnection) => Promise<unknown>[]
    > = {
      watcher: (nc) => [
        jetstream(nc).publish(subjects.deadLetter(origins.watcher(OPERATOR), key), '{}'),
        new Kvm(nc)
          .open(Buckets.cursors)
          .then((kv) => kv.put(`${OPERATOR}.control._core._all._`, '{}')),
      ],
      reconciler: (nc) => [
        jetstream(nc).publish(subjects.deadLetter(origins.reconciler(OPERATOR), key), '{}'),
        jetstream(nc).publish(subjects.outcome(origins.reconciler(OPERATOR), key), '{}'),
        new Kvm(nc).open(Buckets.deliveries).then((kv) => kv.put(`${OPERATOR}.control`, '{}')),
        new Kvm(nc)
          .open(performedBucketOf(OPERATOR))
          .then((kv) => kv.put('0123abcd.0123abcd', '{}')),
        jetstreamManager(nc).then((jsm) =>
          jsm.streams.purge(`KV_${performedBucketOf(OPERATOR)}`, {
            filter: `$KV.${performedBucketOf(OPERATOR)}.0123abcd.>`,
          }),
        ),
      ],
      'status-writer': (nc) => [
        jetstream(nc).publish(subjects.deadLetter(origins.statusWriter(OPERATOR), key), '{}'),
        jetstream(nc).publish(subjects.outcome(origins.statusWriter(OPERATOR), key), '{}'),
      ],
    };
    for (const [user, writes] of Object.entries(own) as [
      keyof typeof own,
      (typeof own)[keyof typeof own],
    ][]) {
      const nc = await connect({ servers: bed.natsUrl, user, pass: users[user] });
      try {
        await Promise.all(writes(nc));
      } finally {
        await nc.close();
      }
    }
    // nothing any of them tried took effect
    const admin = await connect({
      servers: bed.natsUrl,
      user: 'admin',
      pass: passwords.KUBEBUS_ADMIN_PASSWORD,
    });
    try {
      const jsm = await jetstreamManager(admin);
      assert.equal((await jsm.consumers.info(Streams.work, work)).config.ack_wait, 5_000_000_000);
      assert.equal((await jsm.consumers.info(Streams.status, status)).name, status);
      const names: string[] = [];
      for await (const name of jsm.consumers.list(Streams.work)) names.push(name.name);
      assert.ok(!names.includes('rogue'), names.join());
      const leases = await new Kvm(admin).open(Buckets.leases);
      assert.equal(await leases.get(leaseKey(leaseGroups.work(OTHER), 0)), null);
      const cursors = await new Kvm(admin).open(Buckets.cursors);
      assert.equal(await cursors.get(`${OTHER}.widgets.test_kubebus_dev._all._`), null);
      // the watcher, under its own user, keeps its cursors under its operator's name
      const cursorKeys: string[] = [];
      for await (const name of await cursors.keys()) cursorKeys.push(name);
      assert.ok(
        cursorKeys.some((name) => name.startsWith(`${OPERATOR}.databaseclusters.`)),
        cursorKeys.join(),
      );
      assert.ok(
        cursorKeys.every((name) => name.startsWith(`${OPERATOR}.`)),
        cursorKeys.join(),
      );
      assert.notEqual(await cursors.get(`${OPERATOR}.control._core._all._`), null);
    } finally {
      await admin.close();
    }
    await assert.rejects(
      connect({ servers: bed.natsUrl, user: 'watcher', pass: 'wrong' }),
      'a wrong password is refused',
    );
  });

  it("keeps the operator's external state in its own account, where a RePublish reaches nothing of kubebus", async () => {
    const state = await connect({
      servers: bed.natsUrl,
      user: STATE_USER.KUBEBUS_STATE_NATS_USER,
      pass: STATE_USER.KUBEBUS_STATE_NATS_PASSWORD,
    });
    const admin = await connect({
      servers: bed.natsUrl,
      user: 'admin',
      pass: passwords.KUBEBUS_ADMIN_PASSWORD,
    });
    try {
      const stateStreams: string[] = [];
      for await (const name of (await jetstreamManager(state)).streams.names())
        stateStreams.push(name);
      // the converged cluster's backup bucket was created there, not beside kubebus' streams
      assert.ok(
        stateStreams.some((name) => name.startsWith('OBJ_kubebus-backups-')),
        stateStreams.join(),
      );
      assert.ok(!stateStreams.includes(Streams.events), 'kubebus is not in the state account');
      const kubebusStreams: string[] = [];
      for await (const name of (await jetstreamManager(admin)).streams.names())
        kubebusStreams.push(name);
      assert.ok(!kubebusStreams.some((name) => name.startsWith('OBJ_')), kubebusStreams.join());
      // the escape that worked in one account: a stream republishing into kubebus.events
      const jsm = await jetstreamManager(state);
      await jsm.streams.add({
        name: 'ESCAPE',
        subjects: ['$O.escape.>'],
        republish: { src: '$O.escape.>', dest: 'kubebus.events.>' },
      });
      // subjects of the watcher's own resource: the control below is its to publish
      const eventOf = (name: string) =>
        subjects.event({
          group: 'example.kubebus.dev',
          resource: 'databaseclusters',
          namespace: 'escape',
          name,
        });
      const forged = eventOf('forged');
      const control = eventOf('control');
      await jetstream(state).publish(
        forged.replace(/^kubebus\.events\./, '$O.escape.'),
        '{"forged":true}',
      );
      assert.equal((await jsm.streams.info('ESCAPE')).state.messages, 1, 'stored there');
      const recorded = (subject: string) =>
        jetstreamManager(admin).then((kubebus) =>
          kubebus.streams
            .getMessage(Streams.events, { last_by_subj: subject })
            .then((message) => message !== null)
            .catch(() => false),
        );
      // the control: the same subject published in kubebus' account (by the watcher) is recorded
      const watcher = await connect({ servers: bed.natsUrl, user: 'watcher', pass: users.watcher });
      try {
        await jetstream(watcher).publish(control, '{}');
      } finally {
        await watcher.close();
      }
      assert.ok(await recorded(control), 'the control is recorded');
      assert.ok(!(await recorded(forged)), 'the republished message never reached KUBEBUS_EVENTS');
    } finally {
      await state.close();
      await admin.close();
    }
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
    const check = cli(
      'cli',
      users.cli,
      ['topology', 'check', DATABASE_CLUSTER_OPERATOR],
      ROLE_SETTINGS,
    );
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.doesNotMatch(check.stdout, /missing|differs/);
  });

  it("counts no outcome record a role's user stores on its own subject in another controller's name", async () => {
    // the status writer's user may store outcomes on its own subject only; a body there naming
    // the reconciler is forged ("the reconciler succeeded": a dead letter reconciled since)
    const forged = {
      controller: origins.reconciler(OPERATOR),
      result: 'success',
      ms: 1,
      attempt: 1,
      reconcileId: 'forged',
      traceparent: `00-${'f'.repeat(32)}-${'e'.repeat(16)}-01`,
      at: new Date().toISOString(),
    };
    const writer = await connect({
      servers: bed.natsUrl,
      user: 'status-writer',
      pass: users['status-writer'],
    });
    try {
      await jetstream(writer).publish(
        subjects.outcome(origins.statusWriter(OPERATOR), key),
        JSON.stringify(forged),
      );
    } finally {
      await writer.close();
    }
    const reader = await connect({ servers: bed.natsUrl, user: 'cli', pass: users.cli });
    try {
      const read = await readOutcomes(reader, key);
      // the real ones are read (the cluster converged above), the forged one is not
      assert.ok(read.some((record) => record.controller === origins.reconciler(OPERATOR)));
      assert.equal(read.filter((record) => record.reconcileId === 'forged').length, 0);
    } finally {
      await reader.close();
    }
  });

  it('stays up and not ready on a wrong password, says so in one line, and recovers when the password file changes', async () => {
    const passwordFile = join(bed.dir, 'reconciler-password');
    writeFileSync(passwordFile, 'wrong\n');
    const service = await pipeline.reconciler(
      { KUBEBUS_NATS_USER: 'reconciler', KUBEBUS_NATS_PASSWORD_FILE: passwordFile, ...STATE_USER },
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
