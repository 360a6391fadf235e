import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../events/kube-object.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { BatchingReader } from './batching-reader.js';

const key = (name: string): ObjectKey => ({
  group: '',
  resource: 'configmaps',
  namespace: 'ns',
  name,
});
const object = (name: string) =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, uid: name, resourceVersion: '1' },
  }) as KubeObject;

function recordingReader(fail = false) {
  const batches: string[][] = [];
  return {
    batches,
    reader: {
      readAll: async (keys: readonly ObjectKey[]) => {
        batches.push(keys.map((k) => k.name));
        if (fail) throw new Error('no responders');
        return keys.map((k) => (k.name === 'missing' ? undefined : object(k.name)));
      },
    },
  };
}

describe('batching reader', () => {
  it('sends the reads of one turn as one request, each answered with its own object', async () => {
    const { batches, reader } = recordingReader();
    const reads = new BatchingReader(reader);
    const [a, missing, b] = await Promise.all([
      reads.read(key('a')),
      reads.read(key('missing')),
      reads.read(key('b')),
    ]);
    assert.deepEqual(batches, [['a', 'missing', 'b']]);
    assert.equal(a?.metadata.name, 'a');
    assert.equal(missing, undefined);
    assert.equal(b?.metadata.name, 'b');
    await reads.read(key('c'));
    assert.deepEqual(batches, [['a', 'missing', 'b'], ['c']]);
  });

  it('batches reads made from later continuations of the same turn (reconciles side by side)', async () => {
    const { batches, reader } = recordingReader();
    const reads = new BatchingReader(reader);
    const later = async (name: string, hops: number) => {
      for (let i = 0; i < hops; i++) await Promise.resolve();
      return reads.read(key(name));
    };
    await Promise.all([reads.read(key('a')), later('b', 1), later('c', 5)]);
    assert.deepEqual(batches, [['a', 'b', 'c']]);
  });

  it('fails every read of a batch whose request fails', async () => {
    const { reader } = recordingReader(true);
    const reads = new BatchingReader(reader);
    const results = await Promise.allSettled([reads.read(key('a')), reads.read(key('b'))]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
});
