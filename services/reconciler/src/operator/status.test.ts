// The status a TerminalError leaves on the object: Ready=False with its
// message at the object's generation, the rest as it was; and whether it is
// already there (no second Warning Event for the same failure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@kubebus/shared/events';
import { alreadyTerminal, terminalStatus } from './status.js';

const object = (generation: number, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'apps.example.com/v1',
  kind: 'App',
  metadata: { name: 'a', namespace: 'ns', uid: 'u', resourceVersion: '1', generation },
  ...(status === undefined ? {} : { status }),
});

describe('a terminal failure on the object', () => {
  it('is Ready=False with its message, the status fields kept', () => {
    const status = terminalStatus(
      object(3, { url: 'https://a', observedGeneration: 2 }),
      'no secret',
    );
    assert.equal(status['url'], 'https://a');
    const ready = (status['conditions'] as { type: string }[]).find((c) => c.type === 'Ready');
    assert.deepEqual(
      { ...ready, lastTransitionTime: undefined },
      {
        type: 'Ready',
        status: 'False',
        reason: 'TerminalError',
        message: 'no secret',
        observedGeneration: 3,
        lastTransitionTime: undefined,
      },
    );
  });

  it('is already reported at the same generation with the same message only', () => {
    const reported = object(3, terminalStatus(object(3), 'no secret'));
    assert.equal(alreadyTerminal(reported, 'no secret'), true);
    assert.equal(alreadyTerminal(reported, 'another failure'), false);
    assert.equal(
      alreadyTerminal(
        { ...reported, metadata: { ...reported.metadata, generation: 4 } },
        'no secret',
      ),
      false,
    );
    assert.equal(alreadyTerminal(object(3), 'no secret'), false);
  });

  it('is already reported when its message was stored redacted and escaped', () => {
    // stored as `view` may read it: the password and key replaced, the newline escaped
    const message = 'POST https://bill:pa55@api.example.com/?key=S3CRET failed\nat line 2';
    const reported = object(3, terminalStatus(object(3), message));
    const ready = (reported['status'] as { conditions: { type: string; message: string }[] })
      .conditions[0];
    assert.doesNotMatch(ready?.message ?? '', /pa55|S3CRET|\n/);
    assert.equal(alreadyTerminal(reported, message), true, 'no second Event for it');
  });
});
