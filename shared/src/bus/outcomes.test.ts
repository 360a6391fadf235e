import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outcomeOf, type OutcomeRecord } from './outcomes.js';
import { subjects } from './subjects.js';

const key = {
  group: 'example.kubebus.dev',
  resource: 'databaseclusters',
  namespace: 'a',
  name: 'db',
};
const record = (controller: string): OutcomeRecord => ({
  controller,
  result: 'success',
  ms: 12,
  attempt: 1,
  reconcileId: 'r-1',
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  at: '2026-12-08T00:00:00.000Z',
});
const stored = (subject: string, body: unknown) => ({
  subject,
  data: new TextEncoder().encode(JSON.stringify(body)),
});

describe('an outcome record off the bus', () => {
  it('counts under the subject of the controller it names', () => {
    const own = record('databasecluster');
    assert.deepEqual(outcomeOf(stored(subjects.outcome('databasecluster', key), own), key), own);
  });

  it("is not another controller's for saying so on its own subject", () => {
    // the status writer's user may publish only on its own subject: a body naming the reconciler there is forged
    const forged = record('databasecluster');
    const onItsOwn = subjects.outcome('databasecluster_status-writer', key);
    assert.equal(outcomeOf(stored(onItsOwn, forged), key), undefined);
    // nor one of an operator that does not exist
    assert.equal(outcomeOf(stored(onItsOwn, record('widgets')), key), undefined);
  });

  it('is nothing when it is not a record, or names another object', () => {
    const subject = subjects.outcome('databasecluster', key);
    assert.equal(outcomeOf({ subject, data: new TextEncoder().encode('{') }, key), undefined);
    assert.equal(outcomeOf(stored(subject, { controller: 'databasecluster' }), key), undefined);
    assert.equal(
      outcomeOf(stored(subject, record('databasecluster')), { ...key, name: 'other' }),
      undefined,
    );
  });
});
