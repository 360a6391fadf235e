import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ObservedState } from './observed-state.js';
import { livesWithin, withoutUnseenEvents } from './unseen-lives.js';
import type { Step } from './workload.js';

const apply = (why: string): Step => ({ action: 'apply', spec: {}, why });
const remove: Step = { action: 'delete', why: 'delete' };
// create, change, delete, create again, delete
const steps: Step[] = [apply('s0'), apply('s1'), remove, apply('s3'), remove];

const state = (events: Record<string, number>): ObservedState => ({
  primary: null,
  generations: null,
  owned: {},
  events,
});

describe('unseen lives of an unobserved window', () => {
  it('finds only the lives that began and ended inside the window', () => {
    assert.deepEqual(livesWithin(steps, 3, 4), [[3, 4]]);
    assert.deepEqual(livesWithin(steps, 0, 4), [
      [0, 2],
      [3, 4],
    ]);
    // the first life began before the window: the operator saw it
    assert.deepEqual(livesWithin(steps, 1, 2), []);
    // the second life is not over by step 3
    assert.deepEqual(livesWithin(steps, 2, 3), []);
  });

  it('owes the Events of the lives the operator saw, not those of the unseen one', () => {
    const states = [
      state({ Created: 1 }),
      state({ Created: 1 }),
      state({ Created: 1, Removed: 1 }),
      state({ Created: 2, Removed: 1 }),
      state({ Created: 2, Removed: 2 }),
    ];
    assert.deepEqual(withoutUnseenEvents(states, [[3, 4]], 4)?.events, {
      Created: 1,
      Removed: 1,
    });
    assert.deepEqual(withoutUnseenEvents(states, [], 4)?.events, { Created: 2, Removed: 2 });
    // the declared external calls (ctx.once) the same way
    const charged = states.map((s, index) => ({ ...s, effects: { charge: index < 3 ? 1 : 2 } }));
    assert.deepEqual(withoutUnseenEvents(charged, [[3, 4]], 4)?.effects, { charge: 1 });
    assert.deepEqual(
      withoutUnseenEvents(
        states,
        [
          [0, 2],
          [3, 4],
        ],
        4,
      )?.events,
      {},
    );
  });
});
