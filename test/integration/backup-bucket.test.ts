// The example's external resource on a real nats-server: the bucket a
// DatabaseCluster's backups go to. Created with one stream-info and one
// stream-create request (what a Go operator's CreateObjectStore sends), and
// an object store like any other: Objm opens it, stores and reads an object
// in it, and destroys it.
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BackupBuckets, bucketName } from '../../examples/databasecluster/backup-bucket.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

describe('the backup bucket of a DatabaseCluster', { timeout: 60_000 }, () => {
  let nats: StandaloneNats;
  let nc: NatsConnection;

  before(async () => {
    nats = await standaloneNats('bucket');
    ({ nc } = nats);
  });

  after(() => nats.stop());

  /** The JetStream API requests nats-server receives, by kind (a second connection's wiretap). */
  async function wiretap() {
    const tap = await connect({ servers: nats.url });
    const seen: string[] = [];
    tap.subscribe('$JS.API.>', {
      callback: (_error, message) => {
        seen.push(message.subject.split('.').slice(2, 4).join('.'));
      },
    });
    await tap.flush();
    // the server answers the tap's flush after what it sent the tap before it
    return { seen, drained: () => tap.flush(), close: () => tap.close() };
  }

  it('is created with one question and one create, once', async () => {
    const buckets = new BackupBuckets(nc);
    await buckets.exists('warm-up'); // the manager's own account request, once per process
    const tap = await wiretap();
    try {
      assert.equal(await buckets.ensure('uid-1'), 'created');
      await nc.flush();
      await tap.drained();
      assert.deepEqual(tap.seen, ['STREAM.INFO', 'STREAM.CREATE']);
      // another process (no memory of it) finds it
      assert.equal(await new BackupBuckets(nc).ensure('uid-1'), 'exists');
    } finally {
      await tap.close();
    }
  });

  it('is an object store: stored, read back and destroyed like any other', async () => {
    const buckets = new BackupBuckets(nc);
    assert.equal(await buckets.ensure('uid-2'), 'created');
    const store = await new Objm(nc).open(bucketName('uid-2'));
    await store.putBlob({ name: 'backup-1' }, new TextEncoder().encode('rows'));
    assert.equal(
      new TextDecoder().decode((await store.getBlob('backup-1')) ?? new Uint8Array()),
      'rows',
    );
    assert.equal(await buckets.remove('uid-2'), 'removed');
    assert.equal(await buckets.exists('uid-2'), false);
    assert.equal(await buckets.remove('uid-2'), 'absent');
    // removed, it is created again when the cluster is reconciled
    assert.equal(await buckets.ensure('uid-2'), 'created');
  });

  it('is the stream Objm.create makes for the same bucket', async () => {
    await new BackupBuckets(nc, 1).ensure('uid-3');
    await new Objm(nc).create(bucketName('uid-4'), {
      description: 'backups of DatabaseCluster uid-3',
      replicas: 1,
    });
    const jsm = await jetstreamManager(nc);
    const { config: ours } = await jsm.streams.info(`OBJ_${bucketName('uid-3')}`);
    const { config: objm } = await jsm.streams.info(`OBJ_${bucketName('uid-4')}`);
    const named = (name: string) => [`$O.${name}.C.>`, `$O.${name}.M.>`];
    assert.deepEqual(ours.subjects, named(bucketName('uid-3')));
    assert.deepEqual(
      { ...ours, name: '', subjects: [], created: undefined, metadata: undefined },
      { ...objm, name: '', subjects: [], created: undefined, metadata: undefined },
    );
  });

  it('lets two replicas racing to create it both succeed', async () => {
    const results = await Promise.all([
      new BackupBuckets(nc).ensure('uid-5'),
      new BackupBuckets(nc).ensure('uid-5'),
    ]);
    assert.ok(results.includes('created'), results.join(', '));
    assert.equal(await new BackupBuckets(nc).exists('uid-5'), true);
  });
});
