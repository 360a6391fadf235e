import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { boundarySpec, specArbitrary, UnsupportedSchemaError } from './spec-arbitrary.js';

const Spec = z.object({
  engine: z.enum(['postgres', 'mysql']),
  version: z.string().regex(/^[0-9]+(\.[0-9]+){0,2}$/),
  replicas: z.int().min(1).max(9).default(3),
  ratio: z.number().gt(0).lt(1),
  name: z.string().min(2).max(8),
  tags: z.array(z.string().max(3)).max(2).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  mode: z.union([z.literal('fast'), z.boolean()]),
  note: z.string().nullable(),
  storage: z.object({ size: z.string().regex(/^[0-9]+Gi$/) }).optional(),
});

test('every generated spec passes the schema it was generated from', () => {
  fc.assert(
    fc.property(specArbitrary(Spec), (spec) => {
      const parsed = Spec.safeParse(spec);
      assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    }),
    { seed: 42, numRuns: 300 },
  );
});

test('the same seed gives the same specs, another seed others', () => {
  const draw = (seed: number) => fc.sample(specArbitrary(Spec), { seed, numRuns: 5 });
  assert.deepEqual(draw(7), draw(7));
  assert.notDeepEqual(draw(7), draw(8));
});

test('the boundary specs take every bound at its end and pass the schema', () => {
  const low = boundarySpec(Spec, 'low', 1) as Record<string, unknown>;
  const high = boundarySpec(Spec, 'high', 1) as Record<string, unknown>;
  assert.ok(Spec.safeParse(low).success, JSON.stringify(low));
  assert.ok(Spec.safeParse(high).success, JSON.stringify(high));
  assert.equal(low['replicas'], undefined, 'a defaulted field is left out at the low end');
  assert.equal(high['replicas'], 9);
  assert.equal(low['engine'], 'postgres');
  assert.equal(high['engine'], 'mysql');
  assert.equal((low['name'] as string).length, 2);
  assert.equal((high['name'] as string).length, 8);
  assert.ok((low['ratio'] as number) > 0 && (high['ratio'] as number) < 1);
  assert.equal(low['tags'], undefined);
  assert.equal((high['tags'] as unknown[]).length, 2);
  assert.deepEqual(Object.keys(high['storage'] as object), ['size']);
});

test('an integer bound that is exclusive moves to the next integer', () => {
  const Count = z.object({ n: z.int().gt(0).lt(10) });
  assert.deepEqual(boundarySpec(Count, 'low', 1), { n: 1 });
  assert.deepEqual(boundarySpec(Count, 'high', 1), { n: 9 });
});

test('a type that cannot be generated names its path and what to do', () => {
  const Odd = z.object({ when: z.date() });
  assert.throws(
    () => specArbitrary(Odd),
    (error: unknown) => {
      assert.ok(error instanceof UnsupportedSchemaError);
      assert.match(
        error.message,
        /^spec\.when: a zod date cannot be generated; give sample objects/,
      );
      return true;
    },
  );
});
