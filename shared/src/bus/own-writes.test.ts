import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnWrites } from './own-writes.js';

const key = { group: '', resource: 'configmaps', namespace: 'ns', name: 'page' };
const other = { ...key, name: 'other' };
const written = (resourceVersion: string) => ({ metadata: { uid: 'u1', resourceVersion } });
const revision = (seq: number, resourceVersion: string, uid = 'u1') => ({
  seq,
  uid,
  resourceVersion,
});

describe('OwnWrites', () => {
  it('calls everything fresh for an object this process never wrote', () => {
    const writes = new OwnWrites();
    writes.wrote(other, written('9'), '/x');
    assert.equal(writes.freshness(key, undefined), 'fresh');
    assert.equal(writes.freshness(key, revision(1, '1')), 'fresh');
    assert.equal(writes.pending(key), undefined);
  });

  it('calls the written revision fresh and remembers where it was', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.wrote(key, written('20'), '/p');
    assert.equal(writes.freshness(key, revision(7, '20')), 'fresh');
    // from then on the bus' order decides: later is fresh, earlier (a lagging replica) stale
    assert.equal(writes.freshness(key, revision(9, '25')), 'fresh');
    assert.equal(writes.freshness(key, revision(6, '19')), 'stale');
    assert.equal(writes.freshness(key, undefined), 'stale');
    assert.equal(writes.pending(key)?.from, 7);
  });

  it('calls a record no later than the read before the write stale', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.wrote(key, written('20'), '/p');
    assert.equal(writes.freshness(key, revision(4, '19')), 'stale');
    assert.equal(writes.freshness(key, undefined), 'stale');
    assert.equal(writes.pending(key)?.from, 5);
  });

  it('cannot tell a later record of another revision by itself: the stream must say', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.wrote(key, written('20'), '/p');
    // someone else's write, before or after the own one: resourceVersions are not compared
    assert.equal(writes.freshness(key, revision(8, '30')), 'unknown');
    assert.equal(writes.freshness(key, revision(8, '20', 'u2')), 'unknown');
    const pending = writes.pending(key);
    assert.ok(pending !== undefined);
    assert.equal(pending.reached(revision(6, '18')), false);
    assert.equal(pending.reached(revision(7, '20')), true);
    // now known: the later record is fresh, no stream read needed
    assert.equal(writes.freshness(key, revision(8, '30')), 'fresh');
  });

  it('keeps where a read fell back, and forgets it with the next write', () => {
    const writes = new OwnWrites();
    writes.wrote(key, written('20'), '/api/v1/namespaces/ns/configmaps/page');
    const pending = writes.pending(key);
    assert.equal(pending?.path, '/api/v1/namespaces/ns/configmaps/page');
    pending?.fellBack(3);
    assert.equal(writes.pending(key)?.fellBackAt, 3);
    writes.wrote(key, written('21'), '/p');
    assert.equal(writes.pending(key)?.fellBackAt, undefined);
  });

  it('holds at most its capacity, the least recent going first', () => {
    const writes = new OwnWrites(2);
    writes.wrote(key, written('1'), '/a');
    writes.wrote(other, written('2'), '/b');
    writes.wrote({ ...key, name: 'third' }, written('3'), '/c');
    assert.equal(writes.pending(key), undefined);
    assert.ok(writes.pending(other) !== undefined);
  });

  it('after a fall-back, waits only for what the apiserver answered, or for nothing once it is gone', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.wrote(key, written('20'), '/p');
    // the bus never carries rv 20 (a relist published only 23): the GET answered 23
    writes.pending(key)?.answered(written('23'), 4);
    assert.equal(writes.pending(key)?.fellBackAt, 4);
    assert.equal(writes.freshness(key, revision(8, '23')), 'fresh');
    assert.equal(writes.freshness(key, revision(3, '19')), 'stale');
    writes.pending(key)?.answered(undefined, 8);
    assert.equal(writes.pending(key), undefined);
    assert.equal(writes.freshness(key, revision(3, '19')), 'fresh');
  });
});
