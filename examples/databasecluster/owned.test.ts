import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CREDENTIALS_ANNOUNCED,
  announcedCredentials,
  awaitsAnnouncement,
  newCredentials,
} from './owned.js';
import { DatabaseClusterSpecSchema } from './spec.js';

const cluster = { metadata: { name: 'db', namespace: 'shop', uid: 'u1', resourceVersion: '1' } };
const spec = DatabaseClusterSpecSchema.parse({
  engine: 'postgres',
  version: '16',
  storage: { size: '1Gi' },
});

describe('the credentials Secret', () => {
  it('is created awaiting its announcement, and the mark ends the wait', () => {
    const created = newCredentials(cluster, spec);
    assert.equal(awaitsAnnouncement(created), true);
    const marked = announcedCredentials(cluster);
    assert.equal(awaitsAnnouncement(marked), false);
    // the mark carries no data: applying it leaves the generated password alone
    assert.deepEqual(Object.keys(marked).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.equal(marked.metadata.name, created.metadata.name);
  });

  it('is not announced again when unknown or made before the mark existed', () => {
    assert.equal(awaitsAnnouncement(undefined), false);
    const older = { metadata: { name: 'db-credentials', annotations: {} } };
    assert.equal(awaitsAnnouncement(older), false);
    const other = { metadata: { name: 'x', annotations: { [CREDENTIALS_ANNOUNCED]: 'true' } } };
    assert.equal(awaitsAnnouncement(other), false);
  });
});
