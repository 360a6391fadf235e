// What `kubebus storage check` finds wrong with one stored object under a
// release: its schema, a conversion that throws, a round trip that loses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineResource, type ServedVersion } from '@kubebus/shared/definition';
import { storedObjectProblem } from './stored-objects-check.js';

const Dial = defineResource({
  group: 'test.kubebus.dev',
  kind: 'Dial',
  scope: 'Namespaced',
  versions: {
    v1beta1: { spec: z.object({ level: z.int() }), status: z.object({}) },
    v1: { spec: z.object({ percent: z.int().min(0) }), status: z.object({}) },
  },
  storage: 'v1',
  convert: {
    v1beta1: {
      toStorage: ({ spec }) => {
        if (spec.level === 13) throw new Error('level 13 has no percentage');
        return { spec: spec.level === undefined ? {} : { percent: spec.level * 10 } };
      },
      // a percent that is not a multiple of 10 does not come back
      fromStorage: ({ spec }) => ({
        spec: spec.percent === undefined ? {} : { level: Math.round(spec.percent / 10) },
      }),
    },
  },
});

const version = (name: string): ServedVersion => {
  const found = Dial.versions.find((known) => known.name === name);
  assert.ok(found);
  return found;
};
const dial = (apiVersion: string, spec: unknown) => ({
  apiVersion: `test.kubebus.dev/${apiVersion}`,
  metadata: { name: 'd', namespace: 'n', uid: 'u', resourceVersion: '1' },
  spec,
});

describe('a stored object under a release', () => {
  it('passes when its schema takes it and every version gives it back', () => {
    assert.equal(
      storedObjectProblem(Dial, dial('v1beta1', { level: 4 }), version('v1beta1')),
      undefined,
    );
    assert.equal(storedObjectProblem(Dial, dial('v1', { percent: 40 }), version('v1')), undefined);
  });

  it('names a conversion that refuses it, with the conversion’s message', () => {
    const problem = storedObjectProblem(Dial, dial('v1beta1', { level: 13 }), version('v1beta1'));
    assert.match(
      problem ?? '',
      /^v1beta1 → v1: converting Dial n\/d from v1beta1 to the storage version failed: level 13 has no percentage$/,
    );
  });

  it('names the field a round trip changes', () => {
    const problem = storedObjectProblem(Dial, dial('v1', { percent: 75 }), version('v1'));
    assert.equal(problem, 'v1 → v1beta1 → v1: the round trip changes spec.percent');
  });

  it('names a value an earlier, looser schema let in', () => {
    const problem = storedObjectProblem(Dial, dial('v1', { percent: -5 }), version('v1'));
    assert.match(
      problem ?? '',
      /^does not pass this release's v1 schema \(spec\.percent: .+\): its reconciles will say InvalidSpec$/,
    );
  });

  it('names a converted value the other version’s schema refuses', () => {
    const problem = storedObjectProblem(Dial, dial('v1beta1', { level: -1 }), version('v1beta1'));
    assert.match(problem ?? '', /^v1beta1 → v1: the v1 spec does not pass its schema: percent: /);
  });
});
