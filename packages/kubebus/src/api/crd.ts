// The CustomResourceDefinition of a resource made by defineResource: the
// OpenAPI schema from its zod spec and status (z.toJSONSchema) with the
// fix-ups a structural schema needs, the status subresource, and the columns
// `kubectl get` shows (Ready and Age always); one entry per version, and for
// a resource in several versions the conversion webhook (conversion-target.ts).
import { CONDITIONS_SCHEMA, openApiOf } from '@kubebus/shared/kube';
import type { CustomResource, ServedVersion } from '@kubebus/shared/definition';
import { conversionOf, type ConversionTarget } from './conversion-target.js';

type Schema = Record<string, unknown>;

/** The status schema: the resource's own fields plus what the runtime keeps. */
function statusSchema(version: ServedVersion): Schema {
  const own = openApiOf(version.status);
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

/**
 * The CRD of a resource. A resource in several versions is converted by the
 * webhook `kubebus run` serves: where the apiserver reaches it (default: the
 * Service `kubebus generate` writes in kubebus-system).
 */
export function crdOf(resource: CustomResource, conversion?: ConversionTarget) {
  const { definition } = resource;
  const singular = definition.kind.toLowerCase();
  const webhook = resource.versions.length > 1 ? conversionOf(resource, conversion) : undefined;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${resource.plural}.${resource.group}`,
      ...(webhook?.annotations === undefined ? {} : { annotations: webhook.annotations }),
    },
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
      versions: resource.versions.map((version) => versionOf(resource, version)),
      ...(webhook === undefined ? {} : { conversion: webhook.conversion }),
    },
  };
}

function versionOf(resource: CustomResource, version: ServedVersion) {
  const { definition } = resource;
  const { validations } = version;
  return {
    name: version.name,
    served: version.served,
    storage: version.storage,
    ...(version.deprecated === undefined
      ? {}
      : version.deprecated === true
        ? { deprecated: true }
        : { deprecated: true, deprecationWarning: version.deprecated }),
    subresources: { status: {} },
    additionalPrinterColumns: [
      ...version.printerColumns.map((column) => ({ ...column })),
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
        ...(definition.description === undefined ? {} : { description: definition.description }),
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
          spec: openApiOf(version.spec),
          status: withoutUndefined(statusSchema(version)),
        },
      },
    },
  };
}
