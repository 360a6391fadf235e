import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUsageError } from '@kubebus/cli/commands';
import { chooseCluster, clusterOption, type ProbeResult } from './dev-cluster.js';

const answering: ProbeResult = {
  answers: true,
  context: 'kind-dev',
  server: 'https://127.0.0.1:6443',
};
const silent: ProbeResult = { answers: false, reason: 'the context kind-dev does not answer' };

describe('kubebus dev: which cluster', () => {
  it('takes the current context when it answers, and says how to choose the other', async () => {
    const choice = await chooseCluster(undefined, () => Promise.resolve(answering));
    assert.equal(choice.cluster, 'existing');
    assert.match(choice.why, /kind-dev \(https:\/\/127\.0\.0\.1:6443\); --cluster local/);
  });

  it('falls back to loopback servers, saying why, when the context does not answer', async () => {
    const choice = await chooseCluster(undefined, () => Promise.resolve(silent));
    assert.deepEqual(choice, {
      cluster: 'local',
      why: 'loopback servers: the context kind-dev does not answer',
    });
  });

  it('--cluster local never asks the kubeconfig', async () => {
    let asked = false;
    const choice = await chooseCluster('local', () => {
      asked = true;
      return Promise.resolve(answering);
    });
    assert.equal(choice.cluster, 'local');
    assert.equal(asked, false);
  });

  it('--cluster existing on a cluster that does not answer is one line saying what to do', async () => {
    await assert.rejects(
      chooseCluster('existing', () => Promise.resolve(silent)),
      (error: unknown) =>
        isUsageError(error) &&
        /^--cluster existing: the context kind-dev does not answer; start the cluster, pick another with --context, or use --cluster local$/.test(
          (error as Error).message,
        ),
    );
  });

  it('refuses a --cluster it does not know', () => {
    assert.equal(clusterOption(undefined), undefined);
    assert.equal(clusterOption('existing'), 'existing');
    assert.throws(() => clusterOption('kind'), /--cluster takes existing or local; got "kind"/);
  });
});
