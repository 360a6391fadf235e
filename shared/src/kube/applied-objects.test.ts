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
  it('skips the same body only while the record is what its own apply answered', async () => {
    const { client, sent } = answering();
    const applied = new AppliedObjects();
    const apply = (value: string, recorded: KubeObject | undefined) =>
      applied.apply(client, resource, body(value), { fieldManager: 'm' }, recorded);

    // never applied here: sent, whatever the record says
    assert.equal((await apply('a', object('1'))).outcome, 'applied'); // answered rv 1
    // the same body, the record still at its answer: skipped, the record answered
    const skipped = await apply('a', object('1'));
    assert.deepEqual(
      [skipped.outcome, skipped.object.metadata.resourceVersion],
      ['unchanged', '1'],
    );
    assert.equal(sent.length, 1);
    // someone changed it since (another resourceVersion): sent again
    assert.equal((await apply('a', object('7'))).outcome, 'applied'); // answered rv 2
    // re-created (another uid), or no record at all: sent
    assert.equal((await apply('a', object('2', 'u2'))).outcome, 'applied'); // rv 3
    assert.equal((await apply('a', undefined)).outcome, 'applied'); // rv 4
    // a new body: sent, though the record is its last answer
    assert.equal((await apply('b', object('4'))).outcome, 'applied');
    assert.equal(sent.length, 5);
  });

  it('forgets the oldest object past its capacity', async () => {
    const { client, sent } = answering();
    const applied = new AppliedObjects(1);
    const named = (name: string) => ({ ...body('a'), metadata: { name, namespace: 'team-a' } });
    await applied.apply(client, resource, named('one'), { fieldManager: 'm' }, undefined); // rv 1
    await applied.apply(client, resource, named('two'), { fieldManager: 'm' }, undefined); // rv 2
    // 'one' is forgotten: its record, though its own answer, no longer proves anything
    const again = await applied.apply(
      client,
      resource,
      named('one'),
      { fieldManager: 'm' },
      object('1'),
    );
    assert.equal(again.outcome, 'applied');
    assert.equal(sent.length, 3);
  });
});
