// The CustomResourceDefinition of a resource made by defineResource: the
// OpenAPI schema from its zod spec and status (z.toJSONSchema) with the
// fix-ups a structural schema needs, the status subresource, and the columns
// `kubectl get` shows (Ready and Age always).
import { CONDITIONS_SCHEMA, openApiOf } from '@kubebus/shared/kube';
import type { CustomResource } from '@kubebus/shared/definition';

type Schema = Record<string, unknown>;

/** The status schema: the resource's own fields plus what the runtime keeps. */
function statusSchema(resource: CustomResource): Schema {
  const own = openApiOf(resource.definition.status);
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
      conditions: CONDITIONS_SCHEMA,
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
                      ...(rule.reason === undefined ? {} : { reason: rule.reason }),
                    })),
                  }),
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApiOf(definition.spec),
                status: withoutUndefined(statusSchema(resource)),
              },
            },
          },
        },
      ],
    },
  };
}
