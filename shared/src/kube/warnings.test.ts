import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiserverWarnings, parseWarnings } from './warnings.js';

describe('parseWarnings', () => {
  it('reads the texts of 299 warnings, joined or repeated, with escaped quotes', () => {
    assert.deepEqual(
      parseWarnings(
        '299 - "batch/v1beta1 CronJob is deprecated", 299 - "unknown field \\"spec.replica\\""',
      ),
      ['batch/v1beta1 CronJob is deprecated', 'unknown field "spec.replica"'],
    );
    assert.deepEqual(parseWarnings(['299 - "a"', '299 kube-apiserver "b" "Tue, 01 Dec 2026"']), [
      'a',
      'b',
    ]);
    assert.deepEqual(parseWarnings('199 - "not an apiserver warning"'), []);
    assert.deepEqual(parseWarnings(undefined), []);
  });
});

describe('ApiserverWarnings', () => {
  it('counts every warning and logs each distinct text once', () => {
    const logged: string[] = [];
    let counted = 0;
    const warnings = new ApiserverWarnings(
      { warn: (_fields, message) => logged.push(message) },
      { inc: () => (counted += 1) },
    );
    for (let i = 0; i < 3; i += 1)
      warnings.record('299 - "unknown field \\"spec.replica\\""', 'PATCH', '/apis/apps/v1/x');
    warnings.record(['299 - "other"', '299 - "other"'], 'GET', '/api/v1/y');
    warnings.record(undefined, 'GET', '/api/v1/y');
    assert.equal(counted, 5);
    assert.deepEqual(logged, [
      'apiserver warning: unknown field "spec.replica"',
      'apiserver warning: other',
    ]);
  });

  it('forgets the oldest texts past its capacity, so memory stays bounded', () => {
    const logged: string[] = [];
    const warnings = new ApiserverWarnings(
      { warn: (_f, message) => logged.push(message) },
      undefined,
      2,
    );
    for (const text of ['a', 'b', 'c', 'a']) warnings.record(`299 - "${text}"`, 'GET', '/');
    assert.equal(logged.length, 4); // "a" was forgotten when "c" came
  });
});
