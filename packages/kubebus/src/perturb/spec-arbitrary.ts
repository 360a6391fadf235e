// Specs generated from a resource's zod spec schema, as Acto generates them
// from a CRD's schema: a fast-check arbitrary for the zod types a spec is made
// of, and the two boundary specs (every bound at its low end, every bound at
// its high end). Refinements (superRefine, refine) cannot be generated: the
// workload keeps only what the schema accepts (workload.ts).
import fc from 'fast-check';
import type { z } from 'zod';

export class UnsupportedSchemaError extends Error {
  override readonly name = 'UnsupportedSchemaError';
}

/** What zod 4 keeps of a schema: its def (type, inner types, checks). */
interface Def {
  readonly type: string;
  readonly checks?: readonly { readonly _zod: { readonly def: CheckDef } }[];
  readonly [field: string]: unknown;
}
interface CheckDef {
  readonly check: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly value?: number;
  readonly inclusive?: boolean;
  readonly format?: string;
  readonly pattern?: RegExp;
}

function defOf(schema: unknown): Def {
  return (schema as { _zod: { def: Def } })._zod.def;
}

/** Strings longer than this are not generated (a spec field of 512 KiB would swamp the bed). */
const LONGEST_STRING = 64;
const LONGEST_ARRAY = 4;
const LARGEST_INT = 2 ** 31 - 1;

interface Bounds {
  min?: number;
  max?: number;
  minExclusive?: boolean;
  maxExclusive?: boolean;
  pattern?: RegExp;
  integer: boolean;
}

function boundsOf(def: Def): Bounds {
  const bounds: Bounds = { integer: def['format'] === 'safeint' || def['format'] === 'int32' };
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'min_length' || c.check === 'length_equals')
      bounds.min = c.minimum ?? c.value ?? 0;
    if (c.check === 'max_length' || c.check === 'length_equals')
      bounds.max = c.maximum ?? c.value ?? LONGEST_STRING;
    if (c.check === 'greater_than') {
      bounds.min = c.value ?? 0;
      bounds.minExclusive = c.inclusive !== true;
    }
    if (c.check === 'less_than') {
      bounds.max = c.value ?? 0;
      bounds.maxExclusive = c.inclusive !== true;
    }
    if (c.check === 'number_format' && (c.format === 'safeint' || c.format === 'int32'))
      bounds.integer = true;
    if (c.check === 'string_format' && c.format === 'regex' && c.pattern !== undefined)
      bounds.pattern = c.pattern;
  }
  return bounds;
}

function numberRange(bounds: Bounds): { min: number; max: number } {
  if (bounds.integer) {
    const min =
      bounds.min === undefined
        ? -LARGEST_INT
        : Math.ceil(bounds.min) +
          (bounds.minExclusive === true && Number.isInteger(bounds.min) ? 1 : 0);
    const max =
      bounds.max === undefined
        ? LARGEST_INT
        : Math.floor(bounds.max) -
          (bounds.maxExclusive === true && Number.isInteger(bounds.max) ? 1 : 0);
    return { min, max };
  }
  const epsilon = 1e-6;
  return {
    min: (bounds.min ?? -1e9) + (bounds.minExclusive === true ? epsilon : 0),
    max: (bounds.max ?? 1e9) - (bounds.maxExclusive === true ? epsilon : 0),
  };
}

function lengthRange(bounds: Bounds): { minLength: number; maxLength: number } {
  const minLength = bounds.min ?? 0;
  return {
    minLength,
    maxLength: Math.max(minLength, Math.min(bounds.max ?? LONGEST_STRING, LONGEST_STRING)),
  };
}

function stringArbitrary(bounds: Bounds): fc.Arbitrary<string> {
  const { minLength, maxLength } = lengthRange(bounds);
  if (bounds.pattern === undefined)
    return fc.string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'.split('')),
      minLength,
      maxLength,
    });
  return fc
    .stringMatching(bounds.pattern)
    .filter((text) => text.length >= minLength && text.length <= (bounds.max ?? Infinity));
}

/** An arbitrary of values the schema's shape accepts (refinements aside). */
export function specArbitrary(schema: z.ZodType, path = 'spec'): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  switch (def.type) {
    case 'object': {
      const shape = def['shape'] as Record<string, z.ZodType>;
      const fields: Record<string, fc.Arbitrary<unknown>> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(shape)) {
        fields[key] = specArbitrary(field, `${path}.${key}`);
        if (!isOptional(field)) required.push(key);
      }
      // plain objects (fast-check's records have no prototype)
      return fc.record(fields, { requiredKeys: required }).map((value) => ({ ...value }));
    }
    case 'string':
      return stringArbitrary(boundsOf(def));
    case 'number': {
      const bounds = boundsOf(def);
      const range = numberRange(bounds);
      return bounds.integer
        ? fc.integer(range)
        : fc.double({ ...range, noNaN: true, noDefaultInfinity: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.constantFrom(...Object.values(def['entries'] as Record<string, string>));
    case 'literal':
      return fc.constantFrom(...(def['values'] as unknown[]));
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return specArbitrary(def['innerType'] as z.ZodType, path);
    case 'nullable':
      return fc.option(specArbitrary(def['innerType'] as z.ZodType, path), { nil: null });
    case 'pipe':
      return specArbitrary(def['in'] as z.ZodType, path);
    case 'array': {
      const bounds = boundsOf(def);
      return fc.array(specArbitrary(def['element'] as z.ZodType, `${path}[]`), {
        minLength: bounds.min ?? 0,
        maxLength: Math.max(bounds.min ?? 0, Math.min(bounds.max ?? LONGEST_ARRAY, LONGEST_ARRAY)),
      });
    }
    case 'record':
      return fc
        .dictionary(
          fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/),
          specArbitrary(def['valueType'] as z.ZodType, `${path}.*`),
          { maxKeys: LONGEST_ARRAY },
        )
        .map((value) => ({ ...value }));
    case 'union':
      return fc.oneof(
        ...(def['options'] as z.ZodType[]).map((option) => specArbitrary(option, path)),
      );
    default:
      throw new UnsupportedSchemaError(
        `${path}: a zod ${def.type} cannot be generated; give sample objects with --samples (or \`samples\`)`,
      );
  }
}

function isOptional(schema: z.ZodType): boolean {
  const type = defOf(schema).type;
  return type === 'optional' || type === 'default' || type === 'prefault';
}

export type Extreme = 'low' | 'high';

/**
 * The spec with every bound at one end: the low one omits what is optional,
 * takes minimums, the shortest strings and the first enum value; the high one
 * sets every optional field, takes maximums, the longest strings (up to 64)
 * and the last enum value.
 */
export function boundarySpec(
  schema: z.ZodType,
  end: Extreme,
  seed: number,
  path = 'spec',
): unknown {
  const def = defOf(schema);
  switch (def.type) {
    case 'object': {
      const shape = def['shape'] as Record<string, z.ZodType>;
      const value: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(shape)) {
        if (end === 'low' && isOptional(field)) continue;
        value[key] = boundarySpec(field, end, seed, `${path}.${key}`);
      }
      return value;
    }
    case 'string': {
      const bounds = boundsOf(def);
      const { minLength, maxLength } = lengthRange(bounds);
      if (bounds.pattern === undefined) return 'a'.repeat(end === 'low' ? minLength : maxLength);
      // a pattern: of a few matching strings, the shortest or the longest
      const drawn = fc.sample(stringArbitrary(bounds), { seed, numRuns: 40 });
      drawn.sort((a, b) => a.length - b.length);
      const pick = end === 'low' ? drawn[0] : drawn.at(-1);
      if (pick === undefined)
        throw new UnsupportedSchemaError(`${path}: no string matches ${String(bounds.pattern)}`);
      return pick;
    }
    case 'number': {
      const range = numberRange(boundsOf(def));
      return end === 'low' ? range.min : range.max;
    }
    case 'boolean':
      return end === 'high';
    case 'enum': {
      const values = Object.values(def['entries'] as Record<string, string>);
      return end === 'low' ? values[0] : values.at(-1);
    }
    case 'literal': {
      const values = def['values'] as unknown[];
      return end === 'low' ? values[0] : values.at(-1);
    }
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
    case 'nullable':
      return boundarySpec(def['innerType'] as z.ZodType, end, seed, path);
    case 'pipe':
      return boundarySpec(def['in'] as z.ZodType, end, seed, path);
    case 'array': {
      const bounds = boundsOf(def);
      const length =
        end === 'low'
          ? (bounds.min ?? 0)
          : Math.max(bounds.min ?? 0, Math.min(bounds.max ?? LONGEST_ARRAY, LONGEST_ARRAY));
      return Array.from({ length }, () =>
        boundarySpec(def['element'] as z.ZodType, end, seed, `${path}[]`),
      );
    }
    case 'record':
      return end === 'low'
        ? {}
        : { key: boundarySpec(def['valueType'] as z.ZodType, end, seed, `${path}.*`) };
    case 'union': {
      const options = def['options'] as z.ZodType[];
      const option = end === 'low' ? options[0] : options.at(-1);
      if (option === undefined) throw new UnsupportedSchemaError(`${path}: an empty union`);
      return boundarySpec(option, end, seed, path);
    }
    default:
      throw new UnsupportedSchemaError(
        `${path}: a zod ${def.type} cannot be generated; give sample objects with --samples (or \`samples\`)`,
      );
  }
}
