// Pieces of a CRD's structural schema shared by every generated CRD: the
// OpenAPI of a zod schema with what a structural schema must not hold
// removed, and the standard condition.
import { z } from 'zod';

type Schema = Record<string, unknown>;

/** Removes what a Kubernetes structural schema must not hold. */
export function structural(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structural);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === 'additionalProperties' || key === '$ref' || key === 'id')
      continue;
    // z.int() adds the safe-integer range; Kubernetes has no use for it.
    if (
      (key === 'minimum' || key === 'maximum') &&
      Math.abs(value as number) >= Number.MAX_SAFE_INTEGER
    )
      continue;
    out[key] = structural(value);
  }
  return out;
}

/** The OpenAPI v3 schema of a zod schema's input (defaults included), structural. */
export function openApiOf(schema: z.ZodType): Schema {
  return structural(
    z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }),
  ) as Schema;
}

/** metav1.Condition as a CRD schema. */
export const CONDITION_SCHEMA: Schema = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: { type: 'string', maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string', maxLength: 1024 },
    message: { type: 'string', maxLength: 32768 },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
  },
};

/** status.conditions: a map list keyed by type, so appliers own conditions one by one. */
export const CONDITIONS_SCHEMA: Schema = {
  type: 'array',
  items: CONDITION_SCHEMA,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
};
