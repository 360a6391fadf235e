// A zod schema made into a CRD's structural schema: every field the zod
// schema names survives (a field named `id`, a map's keys, a default's data),
// and nothing a structural schema refuses is left.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { openApiOf } from './crd-schema.js';

type Node = Record<string, unknown> & { properties?: Record<string, Node> };

const fieldsOf = (schema: z.ZodType) => (openApiOf(schema) as Node).properties ?? {};

describe('a CRD schema from zod', () => {
  it('keeps fields whose names are JSON Schema keywords, and defaults as data', () => {
    const fields = fieldsOf(
      z.object({
        id: z.string(),
        $ref: z.string().optional(),
        settings: z.object({ id: z.string() }).default({ id: 'first' }),
      }),
    );
    assert.deepEqual(Object.keys(fields), ['id', '$ref', 'settings']);
    assert.deepEqual(fields['settings']?.['default'], { id: 'first' });
    assert.deepEqual(Object.keys(fields['settings']?.properties ?? {}), ['id']);
  });

  it("keeps a map's values typed, so the apiserver keeps its keys", () => {
    const fields = fieldsOf(
      z.object({
        labels: z.record(z.string(), z.string()),
        nested: z.record(z.string(), z.object({ size: z.int() })),
      }),
    );
    assert.deepEqual(fields['labels'], {
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    assert.deepEqual(fields['nested']?.['additionalProperties'], {
      type: 'object',
      properties: { size: { type: 'integer' } },
      required: ['size'],
    });
  });

  it('preserves unknown fields where zod keeps them and no type can say what they are', () => {
    const fields = fieldsOf(
      z.object({
        anything: z.record(z.string(), z.unknown()),
        loose: z.looseObject({ x: z.string() }),
        strict: z.strictObject({ y: z.string() }),
      }),
    );
    assert.deepEqual(fields['anything'], {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    // properties and additionalProperties together are not structural
    assert.equal(fields['loose']?.['additionalProperties'], undefined);
    assert.equal(fields['loose']?.['x-kubernetes-preserve-unknown-fields'], true);
    // false is what pruning does anyway, and a structural schema refuses it
    assert.equal(fields['strict']?.['additionalProperties'], undefined);
    assert.equal(fields['strict']?.['x-kubernetes-preserve-unknown-fields'], undefined);
  });
});
