// What `kubebus storage check` finds wrong with one stored object under a
// release: its schema, a conversion that throws, a round trip that loses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineResource, type ServedVersion } from '@kubebus/shared/definition';
import { storedObjectFindings } from './stored-objects-check.js';

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

const findings = (apiVersion: string, spec: unknown) =>
  storedObjectFindings(Dial, dial(apiVersion, spec), version(apiVersion));

describe('a stored object under a release', () => {
  it('passes when its schema takes it and every version gives it back', () => {
    assert.deepEqual(findings('v1beta1', { level: 4 }), {});
    assert.deepEqual(findings('v1', { percent: 40 }), {});
  });

  it('names a conversion that refuses it, with the conversion’s message', () => {
    assert.match(
      findings('v1beta1', { level: 13 }).problem ?? '',
      /^v1beta1 → v1: converting Dial n\/d from v1beta1 to the storage version failed: level 13 has no percentage$/,
    );
  });

  it('names the field a round trip changes', () => {
    assert.equal(
      findings('v1', { percent: 75 }).problem,
      'v1 → v1beta1 → v1: the round trip changes spec.percent',
    );
  });

  it('says, without failing, what the release’s schema refuses; a conversion’s failure still counts', () => {
    // an earlier, looser schema let it in: InvalidSpec under this release, not the conversion's fault
    assert.deepEqual(findings('v1', { percent: -10 }), {
      invalid:
        "does not pass this release's v1 schema (spec.percent: Too small: expected number to be >=0): its reconciles will say InvalidSpec",
    });
    const both = findings('v1', { percent: -5 });
    assert.match(both.invalid ?? '', /^does not pass/);
    assert.match(both.problem ?? '', /round trip changes spec\.percent/);
  });

  it('names a valid object that converts to one the other version’s schema refuses', () => {
    assert.match(
      findings('v1beta1', { level: -1 }).problem ?? '',
      /^v1beta1 → v1: the v1 spec does not pass its schema: percent: /,
    );
  });

  it('takes a field the release adds with a default as no loss', () => {
    const mode = z.enum(['auto', 'manual']).default('auto');
    const Knob = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Knob',
      scope: 'Namespaced',
      versions: {
        v1beta1: { spec: z.object({ turns: z.int(), mode }), status: z.object({}) },
        v1: { spec: z.object({ degrees: z.int(), mode }), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1beta1: {
          toStorage: ({ spec }) => ({
            spec: {
              ...(spec.turns === undefined ? {} : { degrees: spec.turns * 360 }),
              mode: spec.mode,
            },
          }),
          fromStorage: ({ spec }) => ({
            spec: {
              ...(spec.degrees === undefined ? {} : { turns: Math.round(spec.degrees / 360) }),
              mode: spec.mode,
            },
          }),
        },
      },
    });
    const v1 = Knob.versions.find((known) => known.storage);
    assert.ok(v1);
    // stored before the release added `mode`: the apiserver reads it with the default
    const stored = {
      apiVersion: 'test.kubebus.dev/v1',
      metadata: { name: 'k', namespace: 'n' },
      spec: { degrees: 720 },
    };
    assert.deepEqual(storedObjectFindings(Knob, stored, v1), {});
  });
});
