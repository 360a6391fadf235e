import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomHex } from './random-hex.js';
import { parseTraceparent, startTrace } from './trace.js';

describe('random ids from a pool', () => {
  it('answers the asked number of bytes as hex, never the same id twice across refills', () => {
    const seen = new Set<string>();
    // ten pools' worth: ids from every refill, and ids that straddle none
    for (let i = 0; i < 2_600; i++) {
      const id = randomHex(16);
      assert.match(id, /^[0-9a-f]{32}$/);
      assert.equal(seen.has(id), false, 'an id repeated');
      seen.add(id);
    }
    assert.match(randomHex(8), /^[0-9a-f]{16}$/);
  });

  it('makes valid, distinct traceparents', () => {
    const first = parseTraceparent(startTrace());
    const second = parseTraceparent(startTrace());
    assert.ok(first !== undefined && second !== undefined);
    assert.notEqual(first.traceId, second.traceId);
    assert.notEqual(first.spanId, second.spanId);
  });
});
