import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OutcomeRecord } from '@kubebus/shared/bus';
import { reconciledSince } from './letter-recovery.js';

const outcome = (result: string, at: string, controller = 'backup'): OutcomeRecord => ({
  controller,
  result,
  ms: 5,
  attempt: 1,
  reconcileId: 'r',
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  at,
});

test("a letter stands until its controller's latest round after it got through", () => {
  const letter = { origin: 'backup', time: '2026-12-07T10:00:00.000Z' };
  const later = (minute: number) => `2026-12-07T10:${String(minute).padStart(2, '0')}:00.000Z`;
  assert.equal(reconciledSince(letter, [outcome('success', later(5))]), later(5));
  // a round that did nothing says nothing; another controller's neither
  assert.equal(
    reconciledSince(letter, [
      outcome('success', later(5)),
      outcome('skipped', later(6)),
      outcome('error', later(7), 'backup.status-writer'),
    ]),
    later(5),
  );
  // through, then failing again: the letter stands
  assert.equal(
    reconciledSince(letter, [outcome('success', later(5)), outcome('error', later(6))]),
    undefined,
  );
  // through only before the letter
  assert.equal(
    reconciledSince(letter, [outcome('success', '2026-12-07T09:59:00.000Z')]),
    undefined,
  );
  assert.equal(reconciledSince(letter, []), undefined);
});
