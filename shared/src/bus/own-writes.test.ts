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

  it('after a fall-back, waits only for what the apiserver answered, or for its deletion once it is gone', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.wrote(key, written('20'), '/p');
    // the bus never carries rv 20 (a relist published only 23): the GET answered 23
    writes.pending(key)?.answered(written('23'), 4);
    assert.equal(writes.pending(key)?.fellBackAt, 4);
    assert.equal(writes.freshness(key, revision(8, '23')), 'fresh');
    assert.equal(writes.freshness(key, revision(3, '19')), 'stale');
    writes.pending(key)?.answered(undefined, 8);
    // the bus still shows it alive: stale, and the next read at that record asks the apiserver at once
    assert.equal(writes.freshness(key, revision(8, '23')), 'stale');
    assert.equal(writes.pending(key)?.fellBackAt, 8);
    assert.equal(writes.freshness(key, undefined), 'fresh');
    assert.equal(writes.freshness(key, { ...revision(9, '24'), gone: true }), 'fresh');
  });

  it("hands a reconcile's own writes down once, in the outcome of its primary", () => {
    const primary = { group: 'test.kubebus.dev', resource: 'tallies', namespace: 'ns', name: 't' };
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.wrote(key, written('20'), '/p', primary);
    writes.wrote(key, written('21'), '/p', primary);
    writes.wrote(other, written('30'), '/o');
    // the latest write per object, and nothing for a write made for no primary
    assert.deepEqual(writes.handDown(primary), [
      { key, uid: 'u1', resourceVersion: '21', path: '/p', after: 4 },
    ]);
    assert.deepEqual(writes.handDown(primary), []);
  });

  it('judges the bus against an own write handed down from the previous owner', () => {
    const next = new OwnWrites();
    next.inherit({ key, uid: 'u1', resourceVersion: '20', path: '/p', after: 4 });
    // the bus still at the read before that write: stale, and the wait starts after it
    assert.equal(next.freshness(key, revision(4, '19')), 'stale');
    assert.equal(next.pending(key)?.from, 5);
    assert.equal(next.freshness(key, revision(7, '20')), 'fresh');
  });

  it('takes the latest write the outcome records tell, keeping what it learned of the same one', () => {
    const writes = new OwnWrites();
    writes.read(key, 9);
    writes.wrote(key, written('25'), '/p');
    assert.equal(writes.freshness(key, revision(12, '25')), 'fresh');
    // the same write handed back: where the bus carried it stays known
    writes.inherit({ key, uid: 'u1', resourceVersion: '25', path: '/p', after: 9 });
    assert.equal(writes.freshness(key, revision(11, '24')), 'stale');
    assert.equal(writes.pending(key)?.from, 12);
    // a later one of another process (the same read before it: the bus was stuck) replaces it
    writes.inherit({ key, uid: 'u1', resourceVersion: '27', path: '/p', after: 9 });
    // the earlier write's record is no longer the answer: the stream must say what came after
    assert.equal(writes.freshness(key, revision(12, '25')), 'unknown');
    assert.equal(writes.freshness(key, revision(14, '27')), 'fresh');
  });

  it('after its own deletion, takes a record of the object alive from before it for stale', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.deleted(key, 'u1', '/p');
    // the bus still shows it: stale, and the wait starts after the read before the deletion
    assert.equal(writes.freshness(key, revision(4, '19')), 'stale');
    assert.equal(writes.pending(key)?.from, 5);
    // no record at all: gone, as the deletion left it
    assert.equal(writes.freshness(key, undefined), 'fresh');
    // a later record of it alive may be from before the deletion: the stream must say
    assert.equal(writes.freshness(key, revision(6, '20')), 'unknown');
    const pending = writes.pending(key);
    assert.equal(pending?.reached(revision(6, '20')), false);
    // its deletion (or a deletionTimestamp) reaches it, and from then on the bus' order decides
    assert.equal(pending?.reached({ ...revision(7, '21'), gone: true }), true);
    assert.equal(writes.freshness(key, revision(6, '20')), 'stale');
    assert.equal(writes.freshness(key, revision(9, '1', 'u2')), 'fresh');
  });

  it('after its own deletion, takes another object of the name recorded later for fresh', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.deleted(key, 'u1', '/p');
    assert.equal(writes.freshness(key, revision(8, '30', 'u2')), 'fresh');
    // one recorded no later than the read before the deletion is older than it
    const again = new OwnWrites();
    again.read(key, 4);
    again.deleted(key, 'u1', '/p');
    assert.equal(again.freshness(key, revision(4, '3', 'u0')), 'stale');
  });

  it('after a deletion it cannot name, takes only a record of a deletion for it', () => {
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.deleted(key, undefined, '/p');
    assert.equal(writes.freshness(key, revision(6, '20')), 'unknown');
    assert.equal(writes.pending(key)?.reached(revision(7, '21')), false);
    assert.equal(writes.pending(key)?.reached({ ...revision(8, '22'), gone: true }), true);
  });

  it('hands a deletion down as a deletion', () => {
    const primary = { group: 'test.kubebus.dev', resource: 'tallies', namespace: 'ns', name: 't' };
    const writes = new OwnWrites();
    writes.read(key, 4);
    writes.deleted(key, 'u1', '/p', primary);
    const [handed] = writes.handDown(primary);
    assert.deepEqual(handed, {
      key,
      deleted: true,
      uid: 'u1',
      resourceVersion: '',
      path: '/p',
      after: 4,
    });
    const next = new OwnWrites();
    if (handed !== undefined) next.inherit(handed);
    assert.equal(next.freshness(key, revision(4, '19')), 'stale');
    assert.equal(next.freshness(key, undefined), 'fresh');
  });
});
