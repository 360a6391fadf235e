import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JetStreamManager } from '@nats-io/jetstream';
import { StreamReplicas } from './stream-replicas.js';

/** A stream's info as nats-server answers it, or its failure: only what StreamReplicas asks. */
function streamsAnswering(answers: (() => Promise<{ config: { num_replicas: number } }>)[]) {
  let asked = 0;
  const jsm = {
    streams: {
      info: () => {
        const answer = answers[Math.min(asked, answers.length - 1)];
        asked++;
        return answer?.() ?? Promise.reject(new Error('no answer'));
      },
    },
  } as unknown as JetStreamManager;
  return { jsm, asked: () => asked };
}
const replicas = (n: number) => () => Promise.resolve({ config: { num_replicas: n } });

describe('stream replicas (whether a direct get reads what the leader holds)', () => {
  it('says single for a stream of one replica, and asks once within the refresh period', async () => {
    const { jsm, asked } = streamsAnswering([replicas(1)]);
    const stream = new StreamReplicas(jsm, 'S', 60_000);
    assert.equal(await stream.single(), true);
    assert.equal(await stream.single(), true);
    assert.equal(asked(), 1);
  });

  it('keeps leader reads for a replicated stream, and when the server cannot say', async () => {
    assert.equal(
      await new StreamReplicas(streamsAnswering([replicas(3)]).jsm, 'S').single(),
      false,
    );
    const failing = streamsAnswering([() => Promise.reject(new Error('timeout'))]);
    assert.equal(await new StreamReplicas(failing.jsm, 'S').single(), false);
  });

  it('notices a stream scaled up after the refresh period', async () => {
    const { jsm, asked } = streamsAnswering([replicas(1), replicas(3)]);
    const stream = new StreamReplicas(jsm, 'S', 0);
    assert.equal(await stream.single(), true);
    // past the period: this read still goes by the last answer while the new one is asked
    await stream.single();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(asked(), 2);
    assert.equal(await stream.single(), false);
  });
});
