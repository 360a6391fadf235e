import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IntentsOnTheBus } from './status-handoff.js';

describe('the objects whose status intents may be pending on the bus', () => {
  it('tracks each object from its intent on the bus until the bus is seen empty of it', () => {
    const onTheBus = new IntentsOnTheBus();
    assert.equal(onTheBus.mayBePending('a'), false);
    onTheBus.added('a');
    assert.equal(onTheBus.mayBePending('a'), true);
    assert.equal(onTheBus.mayBePending('b'), false);
    onTheBus.cleared('a');
    assert.equal(onTheBus.mayBePending('a'), false);
  });

  it('past its bound, forgets no object: every one may be pending', () => {
    const onTheBus = new IntentsOnTheBus(2);
    onTheBus.added('a');
    onTheBus.added('b');
    onTheBus.added('c'); // not tracked: from now on nothing is trusted to be clear
    for (const uid of ['a', 'b', 'c', 'never-seen']) assert.equal(onTheBus.mayBePending(uid), true);
    onTheBus.cleared('c');
    assert.equal(onTheBus.mayBePending('c'), true);
  });

  it('when what was pending could not be read, every object may be pending', () => {
    const onTheBus = new IntentsOnTheBus();
    onTheBus.lostTrack();
    assert.equal(onTheBus.mayBePending('any'), true);
  });
});
