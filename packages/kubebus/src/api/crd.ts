// The CustomResourceDefinition of a resource made by defineResource: the
// OpenAPI schema from its zod spec and status (z.toJSONSchema) with the
// fix-ups a structural schema needs, the status subresource, and the columns
// `kubectl get` shows (Ready and Age always).
import { z } from 'zod';
import type { CustomResource } from './resource.js';

type Schema = Record<string, unknown>;

/** Removes what a Kubernetes structural schema must not hold. */
function structural(schema: unknown): unknown {
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

function openApi(schema: z.ZodType): Schema {
  return structural(
    z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }),
  ) as Schema;
}

const CONDITION: Schema = {
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

/** The status schema: the resource's own fields plus what the runtime keeps. */
function statusSchema(resource: CustomResource): Schema {
  const own = openApi(resource.definition.status);
  const properties = (own['properties'] ?? {}) as Schema;
  return {
    ...own,
    type: 'object',
    // the runtime writes status whole; a field the schema forgot must not be pruned silently
    required: undefined,
    description: 'Observed state, written by the kubebus status writer',
    properties: {
      ...properties,
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      conditions: {
        type: 'array',
        items: CONDITION,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      },
    },
  };
}

function withoutUndefined(schema: Schema): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([, value]) => value !== undefined));
}

export function crdOf(resource: CustomResource) {
  const { definition } = resource;
  const singular = definition.kind.toLowerCase();
  const validations = definition.validations ?? [];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${resource.plural}.${resource.group}` },
    spec: {
      group: resource.group,
      scope: resource.scope,
      names: {
        plural: resource.plural,
        singular,
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        ...(definition.shortNames === undefined ? {} : { shortNames: [...definition.shortNames] }),
        categories: [...(definition.categories ?? []), 'kubebus'],
      },
      versions: [
        {
          name: resource.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            ...(definition.printerColumns ?? []).map((column) => ({ ...column })),
            {
              name: 'Ready',
              type: 'string',
              jsonPath: '.status.conditions[?(@.type=="Ready")].status',
            },
            {
              name: 'Reason',
              type: 'string',
              jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
              priority: 1,
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              ...(definition.description === undefined
                ? {}
                : { description: definition.description }),
              required: ['spec'],
              ...(validations.length === 0
                ? {}
                : {
                    'x-kubernetes-validations': validations.map((rule) => ({
                      rule: rule.rule,
                      message: rule.message,
                    })),
                  }),
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApi(definition.spec),
                status: withoutUndefined(statusSchema(resource)),
              },
            },
          },
        },
      ],
    },
  };
}
