import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatherAtTurnEnd, writeAtTurnEnd } from './turn-end.js';

describe('the end of an event-loop turn', () => {
  it(
    'runs what gathers before the writes, its microtasks done in between',
    { timeout: 10_000 },
    async () => {
      const seen: string[] = [];
      await new Promise<void>((resolve) => {
        // a write asked first, as a publish from an I/O callback would
        writeAtTurnEnd(() => {
          seen.push('write');
          resolve();
        });
        gatherAtTurnEnd(() => {
          // a request sent after a few awaits, as a read that first awaits a lookup
          void (async () => {
            await Promise.resolve();
            await Promise.resolve();
            seen.push('request');
          })();
        });
      });
      assert.deepEqual(seen, ['request', 'write']);
    },
  );

  it(
    'takes what is asked after its turn in a later one, not never',
    { timeout: 10_000 },
    async () => {
      const seen: string[] = [];
      await new Promise<void>((resolve) => {
        gatherAtTurnEnd(() => {
          // an immediate asked from the check phase runs in the next iteration's
          setImmediate(() => {
            gatherAtTurnEnd(() => seen.push('late gather'));
            writeAtTurnEnd(() => {
              seen.push('late write');
              resolve();
            });
          });
        });
        writeAtTurnEnd(() => seen.push('write'));
      });
      assert.deepEqual(seen, ['write', 'late gather', 'late write']);
    },
  );

  it(
    'runs a gather asked between the two steps (a microtask of a gather) in the next turn',
    { timeout: 10_000 },
    async () => {
      const seen: string[] = [];
      await new Promise<void>((resolve) => {
        gatherAtTurnEnd(() => {
          void Promise.resolve().then(() => {
            gatherAtTurnEnd(() => {
              seen.push('late gather');
              resolve();
            });
          });
        });
        writeAtTurnEnd(() => seen.push('write'));
      });
      assert.deepEqual(seen, ['write', 'late gather']);
    },
  );
});
