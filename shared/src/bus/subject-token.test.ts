import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeToken, encodeToken } from './subject-token.js';

// DNS-1123 subdomains, the shape of most Kubernetes names, dots included.
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const dnsName = fc.array(label, { minLength: 1, maxLength: 5 }).map((labels) => labels.join('.'));
const anyName = fc.oneof(dnsName, fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string());

describe('subject tokens', () => {
  it('round-trip any string', () => {
    fc.assert(
      fc.property(anyName, (name) => {
        assert.equal(decodeToken(encodeToken(name)), name);
      }),
      { numRuns: 5_000 },
    );
  });

  it('never yield a dot, a wildcard, whitespace or an empty token', () => {
    fc.assert(
      fc.property(anyName, (name) => {
        const token = encodeToken(name);
        assert.ok(token.length > 0);
        assert.doesNotMatch(token, /[.*>\s]/u);
      }),
      { numRuns: 5_000 },
    );
  });

  it('never map two strings to one token', () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => {
        fc.pre(a !== b);
        assert.notEqual(encodeToken(a), encodeToken(b));
      }),
      { numRuns: 5_000 },
    );
  });

  it('keep dotted DNS names readable', () => {
    assert.equal(encodeToken('db.prod.example'), 'db_prod_example');
    assert.equal(encodeToken(''), '~');
    assert.equal(encodeToken('system:masters'), 'system~3Amasters');
  });

  it('reject tokens no encoding produces', () => {
    for (const bad of ['', 'a~2', 'a~2e', 'a b', 'a*', 'x~41']) {
      assert.throws(() => decodeToken(bad), /subject token/);
    }
  });
});
