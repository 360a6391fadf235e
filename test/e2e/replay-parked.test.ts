// kubebus replay of a dead-lettered object (README's debugging path, step 3:
// "would my fix have done better?"), on the test kit's real servers: the
// recorded run parked it after its letter, so the code never ran at its last
// revisions; replay runs the code there anyway. The release that failed fails
// again (exit 1, saying it was parked and still fails); its fix comes to a
// status where the recorded run was parked (exit 0, the status it reaches).
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { kubebusCli } from '../support/kubebus-cli.js';
import quotas, { Quota } from '../support/operators/quotas.js';
import { revisionsOf } from '../support/bus-record.js';
import { waitFor } from '../support/wait.js';
import { isParked } from '@kubebus/shared/bus';

const KEY = {
  group: 'quotas.test.kubebus.dev',
  resource: 'quotas',
  namespace: 'default',
  name: 'broken',
};
const operatorFile = (name: string) =>
  fileURLToPath(new URL(`../support/operators/${name}.ts`, import.meta.url));

describe('kubebus replay of a dead-lettered object', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Quota);
    // three attempts, quickly: a letter within seconds
    await env.run(quotas, {
      env: {
        KUBEBUS_MAX_ATTEMPTS: '3',
        KUBEBUS_BACKOFF_BASE: '100ms',
        KUBEBUS_BACKOFF_CAP: '200ms',
      },
    });
    await env.apply({
      apiVersion: 'quotas.test.kubebus.dev/v1',
      kind: 'Quota',
      metadata: { name: 'broken', namespace: 'default' },
      spec: { cpu: 'lots' },
    });
    await env.waitForCondition(Quota, 'broken', {
      type: 'Degraded',
      status: 'True',
      reason: 'RetryBudgetSpent',
    });
    // replay reads the bus: the parked revision recorded there too (the watcher may lag)
    await waitFor(async () => {
      const last = (await revisionsOf(env.natsEnv, KEY)).at(-1)?.event.data;
      return last !== undefined && isParked(last);
    }, 'the parked revision on the bus');
  });
  after(() => env?.stop());

  const replay = (release: string) =>
    kubebusCli(['replay', operatorFile(release), 'default/broken'], {
      ...env.natsEnv,
      KUBECONFIG: env.kubeconfigPath,
    });

  it('fails with the release that failed: parked when recorded, and still failing', async () => {
    const result = await replay('quotas');
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(
      result.stdout,
      /: no status computed \(cannot read cpu "lots"\); parked after a dead letter when recorded, and still fails$/m,
    );
  });

  it('passes with its fix, showing the status it now comes to where the recorded run was parked', async () => {
    const result = await replay('quotas-fixed');
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(
      result.stdout,
      /: parked after a dead letter when recorded; the code now comes to another status \(Ready True[^)]*\): not counted$/m,
    );
    assert.doesNotMatch(result.stdout, /no status computed/);
  });
});
