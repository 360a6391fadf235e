import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DiscardPolicy, RetentionPolicy } from '@nats-io/jetstream';
import { bucketConfigs, defaultTopology, streamConfigs, Streams } from './topology.js';
import {
  defaultStorageLimits,
  parseByteSize,
  parseStorageLimits,
  parseStorageSizes,
} from './topology-limits.js';

describe('storage limits', () => {
  it('bound every stream and bucket, and the size of a dead letter', () => {
    for (const stream of streamConfigs(defaultTopology))
      assert.ok((stream.max_bytes ?? -1) > 0, `${stream.name} has no max_bytes`);
    for (const bucket of bucketConfigs(defaultTopology))
      assert.ok(bucket.max_bytes > 0, `${bucket.name} has no max_bytes`);
    const dlq = streamConfigs(defaultTopology).find(({ name }) => name === Streams.deadLetters);
    assert.equal(dlq?.max_msg_size, defaultStorageLimits.deadLetterBytes);
  });

  it('make work queues refuse new work when full, and history drop its oldest', () => {
    for (const stream of streamConfigs(defaultTopology)) {
      const expected =
        stream.retention === RetentionPolicy.Workqueue ? DiscardPolicy.New : DiscardPolicy.Old;
      assert.equal(stream.discard, expected, stream.name);
    }
  });

  it('sum to less than 2.1 GiB by default (nats-server reserves them against max_file_store)', () => {
    const total =
      streamConfigs(defaultTopology).reduce((sum, s) => sum + (s.max_bytes ?? 0), 0) +
      bucketConfigs(defaultTopology).reduce((sum, b) => sum + b.max_bytes, 0);
    assert.ok(total < 2.1 * 1024 ** 3, String(total));
  });

  it('are sized from settings', () => {
    assert.equal(parseByteSize('65536'), 65_536);
    assert.equal(parseByteSize('512MiB'), 512 * 1024 ** 2);
    assert.equal(parseByteSize('2GiB'), 2 * 1024 ** 3);
    assert.equal(parseByteSize('1GB'), 1e9);
    assert.equal(parseByteSize('1.5 KiB'), 1536);
    for (const bad of ['', 'lots', '-1', '0', '5 parsecs'])
      assert.equal(parseByteSize(bad), undefined);
    const limits = parseStorageLimits('events=4GiB, dlq-message=256KiB');
    assert.equal(limits.eventsBytes, 4 * 1024 ** 3);
    assert.equal(limits.deadLetterBytes, 256 * 1024);
    assert.equal(limits.workBytes, defaultStorageLimits.workBytes);
    const sized = streamConfigs({ ...defaultTopology, limits });
    assert.equal(sized.find(({ name }) => name === Streams.events)?.max_bytes, 4 * 1024 ** 3);
    assert.throws(() => parseStorageLimits('evnts=1GiB'), /unknown storage limit "evnts"/);
    assert.throws(() => parseStorageLimits('events=big'), /events=big: expected events=<size>/);
  });

  it('take Kubernetes quantities and refuse what would lose work or be misread', () => {
    assert.deepEqual(parseStorageSizes('events=2Gi, performed=128Mi'), {
      eventsBytes: 2 * 1024 ** 3,
      performedBytes: 128 * 1024 ** 2,
    });
    assert.deepEqual(parseStorageSizes(''), {});
    assert.equal(parseByteSize('99999999TiB'), undefined, 'not a safe integer');
    assert.throws(
      () => parseStorageSizes('events=1GiB=7'),
      /events=1GiB=7: expected events=<size>/,
    );
    assert.throws(() => parseStorageSizes('events=1GiB,events=2GiB'), /events is given twice/);
    // names and units are the tables' own keys, not Object.prototype's
    for (const inherited of ['constructor=1GiB', '__proto__=2GiB', 'toString=1GiB'])
      assert.throws(() => parseStorageSizes(inherited), /unknown storage limit/);
    assert.equal(parseByteSize('1constructor'), undefined);
    // a stream too small to hold what kubebus must store would refuse it
    assert.throws(
      () => parseStorageSizes('dlq-message=1KiB'),
      /dlq-message=1KiB is too small: at least 96KiB/,
    );
    assert.throws(() => parseStorageSizes('performed=1'), /too small/);
    assert.throws(() => parseStorageSizes('buckets=100KiB'), /too small/);
  });
});
