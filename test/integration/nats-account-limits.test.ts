// The state account's JetStream limits, on a real nats-server with the account
// block `kubebus generate` writes (nats-users.ts, nats-account-limits.ts). Its
// user may create any stream (ADR 0015): before, nothing bounded what it
// stored but the server's store, shared with every kubebus stream. Now the
// account's share is fixed: a stream reserving more is refused, and past the
// stream, consumer and byte limits a write or a create is refused.
import {
  AckPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import databaseCluster from '../../examples/databasecluster/operator.js';
import {
  STATE_ACCOUNT_LIMITS,
  type JetStreamLimits,
} from '../../packages/kubebus/src/generate/nats-account-limits.js';
import { passwordVariableOf } from '../../packages/kubebus/src/generate/names.js';
import { stateAccountOf } from '../../packages/kubebus/src/generate/nats-users.js';
import { natsConfig, natsUrl, startNats } from '../bed/nats.js';
import type { ServerProcess } from '../bed/process.js';

const SHIPPED_USER = 'shipped-state';
const TINY_USER = 'tiny-state';
/** the same generator with small limits, so that reaching them takes little time */
const TINY: JetStreamLimits = { maxMem: '1MB', maxFile: '1MB', maxStreams: 3, maxConsumers: 2 };
const password = 'state-account-password';
const MB = 1024 * 1024;

/** A JetStream API refusal's text, or undefined when the call succeeded. */
const refusal = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: unknown) => (error as Error).message,
  );

describe('JetStream limits of the state account (real nats-server)', { timeout: 120_000 }, () => {
  let dir: string;
  let server: ServerProcess;
  let url: string;
  const connections: NatsConnection[] = [];

  const connectAs = async (user: string): Promise<NatsConnection> => {
    const nc = await connect({ servers: url, user, pass: password });
    connections.push(nc);
    return nc;
  };
  const managerAs = async (user: string): Promise<JetStreamManager> =>
    jetstreamManager(await connectAs(user));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubebus-account-limits-'));
    const tiny = { ...databaseCluster, name: 'tiny' };
    const config = await natsConfig(dir, {
      extraConfig: [
        'accounts {',
        ...stateAccountOf(databaseCluster, SHIPPED_USER),
        ...stateAccountOf(tiny, TINY_USER, TINY),
        '}',
      ].join('\n'),
      env: {
        [passwordVariableOf(SHIPPED_USER)]: password,
        [passwordVariableOf(TINY_USER)]: password,
      },
    });
    server = await startNats(config);
    url = natsUrl(config);
  });

  after(async () => {
    for (const nc of connections) await nc.close();
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the shipped state account its limits, and refuses a stream reserving more', async () => {
    const jsm = await managerAs(SHIPPED_USER);
    const { limits } = await jsm.getAccountInfo();
    assert.equal(limits.max_storage, 512 * MB, 'max_file');
    assert.equal(limits.max_memory, 64 * MB, 'max_mem');
    assert.equal(limits.max_streams, STATE_ACCOUNT_LIMITS.maxStreams);
    assert.equal(limits.max_consumers, STATE_ACCOUNT_LIMITS.maxConsumers);
    // the server's store is 4 GB here: only the account's limit refuses this
    const tooLarge = await refusal(
      jsm.streams.add({ name: 'HUGE', subjects: ['huge.>'], max_bytes: 2048 * MB }),
    );
    assert.match(tooLarge ?? 'accepted', /insufficient resources|storage/i);
    const inMemory = await refusal(
      jsm.streams.add({
        name: 'RAM',
        subjects: ['ram.>'],
        storage: StorageType.Memory,
        max_bytes: 128 * MB,
      }),
    );
    assert.match(inMemory ?? 'accepted', /insufficient resources|memory/i);
    // the object stores setup makes (unbounded streams) still work within the account
    await jsm.streams.add({ name: 'OBJ_backups', subjects: ['$O.backups.>'] });
  });

  it('refuses a write once the account is full, even to a stream without max_bytes', async () => {
    const nc = await connectAs(TINY_USER);
    const jsm = await jetstreamManager(nc);
    // the state user publishes only object-store and KV subjects
    await jsm.streams.add({ name: 'FILL', subjects: ['$O.fill.>'] });
    const js = jetstream(nc);
    const chunk = new Uint8Array(64 * 1024);
    let stored = 0;
    let refused: string | undefined;
    for (let i = 0; i < 64 && refused === undefined; i++) {
      refused = await refusal(js.publish(`$O.fill.${i}`, chunk));
      if (refused === undefined) stored += chunk.length;
    }
    assert.match(refused ?? 'never refused', /resource|storage|limit/i);
    assert.ok(stored <= MB, `stored ${stored} bytes in a 1 MB account`);
  });

  it('refuses streams and consumers past their limits', async () => {
    const jsm = await managerAs(TINY_USER);
    // FILL exists: two more reach max_streams 3
    for (const name of ['S2', 'S3'])
      await jsm.streams.add({ name, subjects: [`${name}.>`], max_bytes: 1024 });
    const fourth = await refusal(
      jsm.streams.add({ name: 'S4', subjects: ['S4.>'], max_bytes: 1024 }),
    );
    assert.match(fourth ?? 'accepted', /maximum number of streams/i);
    for (const durable of ['c1', 'c2'])
      await jsm.consumers.add('S2', { durable_name: durable, ack_policy: AckPolicy.Explicit });
    const third = await refusal(
      jsm.consumers.add('S2', { durable_name: 'c3', ack_policy: AckPolicy.Explicit }),
    );
    assert.match(third ?? 'accepted', /maximum consumers/i);
  });
});
