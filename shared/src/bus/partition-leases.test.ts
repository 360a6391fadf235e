import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shareOf } from './partition-leases.js';

const shares = (partitions: number, count: number) => {
  const members = Array.from({ length: count }, (_, i) => `replica-${String(i).padStart(2, '0')}`);
  return members.map((member) => shareOf(partitions, members, member));
};

describe("a member's share of the partitions", () => {
  it('gives every partition to exactly one share, and no share more than one above another', () => {
    for (let partitions = 1; partitions <= 40; partitions++)
      for (let count = 1; count <= 12; count++) {
        const all = shares(partitions, count);
        assert.equal(
          all.reduce((a, b) => a + b, 0),
          partitions,
          `${partitions} over ${count}`,
        );
        assert.ok(
          Math.max(...all) - Math.min(...all) <= 1,
          `${partitions} over ${count}: ${all.join()}`,
        );
      }
  });

  it('leaves no replica idle while another holds more than one: 4 over 3 is 2, 1, 1', () => {
    assert.deepEqual(shares(4, 3), [2, 1, 1]);
    assert.deepEqual(shares(16, 3), [6, 5, 5]);
  });

  it('gives one each to as many members as there are partitions, in name order', () => {
    assert.deepEqual(shares(2, 4), [1, 1, 0, 0]);
  });
});
