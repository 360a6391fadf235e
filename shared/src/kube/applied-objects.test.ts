import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../events/kube-object.js';
import { AppliedObjects } from './applied-objects.js';
import type { KubeClient } from './client.js';

const resource = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const body = (value: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'db-config', namespace: 'team-a' },
  data: { value },
});
const object = (resourceVersion: string, uid = 'u1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'db-config', namespace: 'team-a', uid, resourceVersion },
});

/** An apiserver that answers every apply with the next resourceVersion, counting them. */
function answering() {
  const sent: unknown[] = [];
  const client = {
    request: (_path: string, init: { body: unknown }) => {
      sent.push(init.body);
      return Promise.resolve(object(String(sent.length)));
    },
  } as unknown as KubeClient;
  return { client, sent };
}

describe('AppliedObjects', () => {
  it('sends a body this process never applied without reading the record first', async () => {
    const { client, sent } = answering();
    let reads = 0;
    let fenced = 0;
    const applied = new AppliedObjects();
    const answer = await applied.apply(
      client,
      resource,
      body('a'),
      { fieldManager: 'm' },
      {
        recorded: () => {
          reads += 1;
          return Promise.resolve(object('1'));
        },
        fence: () => {
          fenced += 1;
        },
      },
    );
    assert.equal(answer.outcome, 'applied');
    assert.equal(sent.length, 1);
    assert.equal(reads, 0, 'no skip is possible, so the write waits on no read');
    assert.equal(fenced, 1, 'the fence is asked before the write');
  });

  it('skips the same body when the record is still what its apply answered, and reads only then', async () => {
    const { client, sent } = answering();
    const applied = new AppliedObjects();
    let reads = 0;
    let recorded = object('1');
    const again = (value: string) =>
      applied.apply(
        client,
        resource,
        body(value),
        { fieldManager: 'm' },
        {
          recorded: () => {
            reads += 1;
            return Promise.resolve(recorded);
          },
          fence: () => {},
        },
      );
    await again('a'); // answered resourceVersion 1
    assert.equal((await again('a')).outcome, 'unchanged');
    assert.deepEqual([sent.length, reads], [1, 1]);
    // someone changed it since: the record's version differs, so it is applied again
    recorded = object('7');
    assert.equal((await again('a')).outcome, 'applied');
    assert.deepEqual([sent.length, reads], [2, 2]);
    // re-created (another uid): applied
    recorded = object('2', 'u2');
    assert.equal((await again('a')).outcome, 'applied');
    // a new body: applied at once, no read
    assert.equal((await again('b')).outcome, 'applied');
    assert.deepEqual([sent.length, reads], [4, 3]);
  });

  it('creates what it knows nothing of at once, and reads first once it created or found it', async () => {
    const { client, sent } = answering();
    let reads = 0;
    let recorded: KubeObject | undefined = object('1');
    const applied = new AppliedObjects();
    const createOnce = (name: string, readFirst = false) =>
      applied.createOnce(
        client,
        resource,
        { ...body('a'), metadata: { name, namespace: 'team-a' } },
        'm',
        {
          recorded: () => {
            reads += 1;
            return Promise.resolve(recorded);
          },
          fence: () => {},
          readFirst,
        },
      );
    assert.equal(await createOnce('fresh'), 'created');
    assert.equal(reads, 0, 'nothing to skip yet: the create waits on no read');
    assert.equal(await createOnce('fresh'), 'exists');
    assert.deepEqual([reads, sent.length], [1, 1], 'known and recorded: no create sent');
    // known, but the record says it is gone: created again
    recorded = undefined;
    assert.equal(await createOnce('fresh'), 'created');
    assert.deepEqual([reads, sent.length], [2, 2]);
    // replay reads first, as before
    recorded = object('1');
    assert.equal(await createOnce('replayed', true), 'exists');
    assert.deepEqual([reads, sent.length], [3, 2]);
  });
});
