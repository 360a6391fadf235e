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

describe('a zod union or intersection in a CRD schema', () => {
  it('merges object branches: every field, required where every branch requires it', () => {
    const fields = fieldsOf(
      z.object({
        backend: z.discriminatedUnion('type', [
          z.object({ type: z.literal('s3'), bucket: z.string() }),
          z.object({ type: z.literal('disk'), sizeGi: z.int() }),
        ]),
      }),
    );
    assert.deepEqual(fields['backend'], {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['s3', 'disk'] },
        bucket: { type: 'string' },
        sizeGi: { type: 'integer' },
      },
      required: ['type'],
    });
  });

  it('makes a number-or-name int-or-string, and anything else unknown fields kept', () => {
    const fields = fieldsOf(
      z.object({
        port: z.union([z.int(), z.string()]),
        flag: z.union([z.boolean(), z.string()]),
        anything: z.unknown(),
        both: z.object({ a: z.string() }).and(z.object({ b: z.int() })),
      }),
    );
    assert.deepEqual(fields['port'], { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(fields['flag'], { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(fields['anything'], { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(fields['both']?.['required'], ['a', 'b']);
  });

  it('leaves no type inside anyOf, oneOf or allOf anywhere', () => {
    const text = JSON.stringify(
      openApiOf(
        z.object({
          list: z.array(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })])),
          pair: z.tuple([z.string(), z.int()]),
          maybe: z.union([z.string(), z.null()]),
        }),
      ),
    );
    assert.doesNotMatch(text, /anyOf|oneOf|allOf/);
  });
});
