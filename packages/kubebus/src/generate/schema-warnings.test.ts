import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';
import { schemaWarnings, unboundedSpecStrings } from './schema-warnings.js';

const resource = (spec: z.ZodObject) =>
  defineResource({
    group: 'test.kubebus.dev',
    version: 'v1',
    kind: 'Gadget',
    scope: 'Namespaced',
    spec,
    status: z.object({ note: z.string() }).partial(),
  });

describe('spec strings without a maximum length', () => {
  it('are found at any depth, in arrays and maps, and not when bounded, enumerated or formatted', () => {
    const gadget = resource(
      z.object({
        name: z.string(),
        short: z.string().max(63),
        code: z.string().regex(/^[a-z]{1,20}$/),
        word: z.string().regex(/^[a-z]+$/),
        mode: z.enum(['a', 'b']),
        when: z.iso.datetime(),
        nested: z.object({ schedule: z.string(), size: z.string().max(16) }),
        tags: z.array(z.string()),
        labels: z.record(z.string(), z.string().max(63)),
        notes: z.record(z.string(), z.string()),
      }),
    );
    assert.deepEqual(unboundedSpecStrings(gadget).sort(), [
      'spec.name',
      'spec.nested.schedule',
      'spec.notes.*',
      'spec.tags[]',
      'spec.word',
    ]);
  });

  it('make one warning that says how to bound them, and none when every one is bounded', () => {
    const [warning] = schemaWarnings(resource(z.object({ schedule: z.string() })));
    assert.match(
      warning ?? '',
      /^Gadget's spec\.schedule has no maximum length: .* Bound it with \.max\(\) on the zod string/,
    );
    assert.deepEqual(schemaWarnings(resource(z.object({ schedule: z.string().max(128) }))), []);
  });
});
