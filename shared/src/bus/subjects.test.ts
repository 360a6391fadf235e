import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCodes, hasCode } from '../errors/mod.js';
import type { ObjectKey } from '../kube/refs.js';
import { MAX_SUBJECT_BYTES, keyOfSubject, partitionOf, subjects } from './subjects.js';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const dnsName = fc.array(label, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.'));
const key: fc.Arbitrary<ObjectKey> = fc.record({
  group: fc.oneof(fc.constant(''), dnsName),
  resource: label,
  namespace: fc.oneof(fc.constant(''), label), // '' is cluster-scoped
  name: fc.oneof(dnsName, fc.string()),
});

describe('object subjects', () => {
  it('carry the object key reversibly, dotted and cluster-scoped names included', () => {
    fc.assert(
      fc.property(key, fc.nat(63), (k, partition) => {
        assert.deepEqual(keyOfSubject(subjects.event(k)), { ...k });
        assert.deepEqual(keyOfSubject(subjects.work('ctl', partition, k)), { ...k });
        assert.deepEqual(keyOfSubject(subjects.status('ctl', partition, k)), { ...k });
      }),
      { numRuns: 3_000 },
    );
  });

  it('never map two objects to one subject', () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b));
        assert.notEqual(subjects.event(a), subjects.event(b));
      }),
      { numRuns: 3_000 },
    );
  });

  it('give cluster-scoped objects a namespace token no namespace can take', () => {
    const clusterScoped = subjects.event({
      group: '',
      resource: 'nodes',
      namespace: '',
      name: 'n1',
    });
    assert.equal(clusterScoped, 'kubebus.events.~.nodes.~.n1');
  });

  it('have six tokens for events, with no wildcard or whitespace', () => {
    fc.assert(
      fc.property(key, (k) => {
        const subject = subjects.event(k);
        assert.equal(subject.split('.').length, 6);
        assert.doesNotMatch(subject, /[*>\s]/u);
      }),
    );
  });

  it("name the controller in work and status subjects, so one operator's filter never holds another's", () => {
    const k = { group: 'g', resource: 'r', namespace: 'ns', name: 'n' };
    assert.equal(subjects.status('ctl', 3, k), 'kubebus.status.ctl.p3.g.r.ns.n');
    assert.equal(subjects.statusOfPartition('ctl', 3), 'kubebus.status.ctl.p3.>');
    assert.equal(subjects.statusOf('ctl'), 'kubebus.status.ctl.>');
    assert.equal(subjects.workOf('ctl'), 'kubebus.work.ctl.>');
    fc.assert(
      fc.property(key, (k2) => {
        assert.ok(subjects.status('ctl', 0, k2).startsWith('kubebus.status.ctl.'));
        assert.ok(!subjects.status('ctl2', 0, k2).startsWith('kubebus.status.ctl.'));
      }),
    );
  });

  it('spread objects over partitions and keep each in one', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 8_000; i++) {
      const k = { group: 'g', resource: 'r', namespace: 'ns', name: `obj-${i}` };
      const p = partitionOf(k, 8);
      assert.equal(partitionOf(k, 8), p);
      counts[p] = (counts[p] ?? 0) + 1;
    }
    for (const count of counts) assert.ok(count > 800 && count < 1_200, `uneven: ${counts.join()}`);
  });

  it('never moves an object: FNV-1a of the key’s UTF-8 bytes, the partition every running operator already uses', () => {
    const fnv = (text: string) => {
      let hash = 0x811c9dc5;
      for (const byte of Buffer.from(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
      return hash;
    };
    // pinned: a change of the hash moves pending work to partitions no one consumes
    assert.equal(
      partitionOf(
        {
          group: 'example.kubebus.dev',
          resource: 'databaseclusters',
          namespace: 'shop',
          name: 'orders',
        },
        16,
      ),
      13,
    );
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ unit: 'grapheme' }),
        fc.integer({ min: 1, max: 64 }),
        (namespace, name, partitions) => {
          const k = { group: 'g.example', resource: 'things', namespace, name };
          assert.equal(
            partitionOf(k, partitions),
            fnv(`g.example/things/${namespace}/${name}`) % partitions,
          );
        },
      ),
    );
  });
});

describe('subject length', () => {
  const long: ObjectKey = {
    group: '',
    resource: 'configmaps',
    namespace: 'ns',
    name: 'x'.repeat(4_200),
  };

  it('is checked before any publish: a key too long for a subject throws KUBEBUS_INVALID_KEY', () => {
    for (const build of [
      () => subjects.event(long),
      () => subjects.work('ctl', 1, long),
      () => subjects.status('ctl', 1, long),
      () => subjects.outcome('ctl', long),
      () => subjects.outcomesOf(long),
    ])
      assert.throws(build, (error: unknown) => hasCode(error, ErrorCodes.InvalidKey));
  });

  it('never stops a dead letter: its subject names a digest of the key instead', () => {
    const subject = subjects.deadLetter('watcher', long);
    assert.match(subject, /^kubebus\.dlq\.watcher\.~\.invalid-key\.~\.[0-9a-f]{32}$/);
    assert.ok(Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES);
    assert.notEqual(subject, subjects.deadLetter('watcher', { ...long, name: 'y'.repeat(4_200) }));
    assert.deepEqual(keyOfSubject(subject).resource, 'invalid-key');
  });
});
