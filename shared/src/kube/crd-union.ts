// A zod union (anyOf, oneOf) or intersection (allOf) as one structural
// schema. Kubernetes refuses types inside anyOf/oneOf/allOf, so the branches
// are merged into the widest schema that still says what the values are: an
// object with every branch's fields, an array of the merged items, one scalar
// type with the enums together, int-or-string — else unknown fields kept.
// What the union allows exactly is zod's to check: the reconcile parses every
// spec, and an invalid one becomes Ready=False, InvalidSpec.

type Schema = Record<string, unknown>;

const PRESERVE = { 'x-kubernetes-preserve-unknown-fields': true } as const;

const propertiesOf = (schema: Schema) => (schema['properties'] ?? {}) as Record<string, Schema>;

const requiredOf = (schema: Schema) =>
  Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];

/** The structural branches of a union or an intersection, merged into one schema. */
export function mergedBranches(branches: readonly Schema[], intersection: boolean): Schema {
  const nullable = branches.some((b) => b['nullable'] === true || b['type'] === 'null');
  const typed = branches.filter((b) => b['type'] !== 'null');
  const merged = mergeTyped(typed, intersection);
  return nullable ? { ...merged, nullable: true } : merged;
}

function mergeTyped(branches: readonly Schema[], intersection: boolean): Schema {
  if (branches.length === 0) return { ...PRESERVE };
  if (branches.length === 1) return branches[0] ?? { ...PRESERVE };
  const types = new Set(branches.map((b) => b['type']));
  if (types.size === 1) {
    const [type] = types;
    if (type === 'object') return mergedObject(branches, intersection);
    if (type === 'array')
      return {
        type: 'array',
        items: mergeTyped(
          branches.map((b) => (b['items'] ?? PRESERVE) as Schema),
          intersection,
        ),
      };
    if (typeof type === 'string') return mergedScalar(type, branches);
  }
  // a number or a name: what Kubernetes has int-or-string for
  if (types.size === 2 && types.has('string') && types.has('integer'))
    return { 'x-kubernetes-int-or-string': true };
  return { ...PRESERVE };
}

function mergedObject(branches: readonly Schema[], intersection: boolean): Schema {
  if (
    branches.some(
      (b) => b['x-kubernetes-preserve-unknown-fields'] === true || 'additionalProperties' in b,
    )
  )
    return { type: 'object', ...PRESERVE };
  const fields = new Map<string, Schema[]>();
  for (const branch of branches)
    for (const [name, field] of Object.entries(propertiesOf(branch)))
      fields.set(name, [...(fields.get(name) ?? []), field]);
  const properties = Object.fromEntries(
    [...fields].map(([name, schemas]) => [name, mergeTyped(schemas, intersection)]),
  );
  // a field every branch requires is required; in an intersection, any branch's
  const required = intersection
    ? [...new Set(branches.flatMap(requiredOf))]
    : requiredOf(branches[0] ?? {}).filter((name) =>
        branches.every((b) => requiredOf(b).includes(name)),
      );
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function mergedScalar(type: string, branches: readonly Schema[]): Schema {
  // one enum when every branch lists its values (literals), else any value of the type
  const enums = branches.map((b) => b['enum']);
  const values = enums.every(Array.isArray) ? [...new Set(enums.flat())] : undefined;
  return { type, ...(values === undefined ? {} : { enum: values }) };
}
