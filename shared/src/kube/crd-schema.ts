// Pieces of a CRD's structural schema shared by every generated CRD: the
// OpenAPI of a zod schema made structural (what Kubernetes refuses removed,
// unions merged, untyped values kept as given), and the standard condition.
import { z } from 'zod';
import { mergedBranches } from './crd-union.js';

type Schema = Record<string, unknown>;

/** Keywords whose value is one schema, or a list of them. */
const SUBSCHEMA = new Set(['items', 'not']);
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
/** JSON Schema keywords a Kubernetes structural schema does not take. */
const DROPPED = new Set(['$schema', '$ref', 'id', 'propertyNames']);

/** Whether a schema says what its values are (a structural schema must, at every node). */
const typed = (schema: Schema) =>
  typeof schema['type'] === 'string' ||
  schema['x-kubernetes-preserve-unknown-fields'] === true ||
  schema['x-kubernetes-int-or-string'] === true;

/**
 * Makes a JSON Schema structural, as a CRD needs it. Only schema positions
 * are walked — `properties` names fields, `default` and `enum` are data — so a
 * field named `id` or a default holding one stays. A map (`z.record`) keeps
 * its `additionalProperties` schema, so the apiserver keeps its keys; a map of
 * anything, and an object that keeps unknown fields (`z.looseObject`, a
 * catchall beside `properties`, which Kubernetes does not allow together),
 * preserve unknown fields instead; `additionalProperties: false` goes (what a
 * structural schema does not name is pruned anyway). Each node then gets a
 * type Kubernetes takes (typedNode).
 */
export function structural(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structural);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema as Schema)) {
    if (DROPPED.has(key)) continue;
    // z.int() adds the safe-integer range; Kubernetes has no use for it.
    if (
      (key === 'minimum' || key === 'maximum') &&
      Math.abs(value as number) >= Number.MAX_SAFE_INTEGER
    )
      continue;
    if (key === 'properties' && value !== null && typeof value === 'object')
      out[key] = Object.fromEntries(
        Object.entries(value).map(([field, property]) => [field, structural(property)]),
      );
    else if (key === 'additionalProperties') continue;
    else if (SUBSCHEMA.has(key) || SUBSCHEMA_LISTS.has(key)) out[key] = structural(value);
    else out[key] = value;
  }
  const extra = (schema as Schema)['additionalProperties'];
  if (extra !== undefined && extra !== false) {
    const values = extra === true ? {} : (structural(extra) as Schema);
    // a map of anything keeps its keys as the object's own unknown fields
    const any =
      values['x-kubernetes-preserve-unknown-fields'] === true && values['type'] === undefined;
    if (out['properties'] === undefined && typed(values) && !any)
      out['additionalProperties'] = values;
    else out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return typedNode(out);
}

/**
 * A node as Kubernetes takes it: a union or an intersection merged into one
 * schema (crd-union.ts); a node that says nothing of its values (`z.unknown()`)
 * keeps whatever it is given.
 */
function typedNode(node: Schema): Schema {
  const key = ['anyOf', 'oneOf', 'allOf'].find((k) => Array.isArray(node[k]));
  if (key !== undefined) {
    const { [key]: branches, ...rest } = node;
    const merged = mergedBranches(branches as Schema[], key === 'allOf');
    // the node's own words (a description, a default) stay beside the merged schema
    const { type: _type, properties: _properties, required: _required, ...words } = rest;
    return typedNode({ ...words, ...merged });
  }
  return typed(node) ? node : { ...node, 'x-kubernetes-preserve-unknown-fields': true };
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
