// The DatabaseCluster CustomResourceDefinition, generated from the zod spec
// (z.toJSONSchema) with the fix-ups a structural schema needs. The committed
// YAML under deploy/ is this object; a test fails when it is stale.
import { z } from 'zod';
import { DatabaseClusterSpecSchema, GROUP, KIND, PLURAL, VERSION } from './spec.js';

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

const condition: Schema = {
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

const statusSchema: Schema = {
  type: 'object',
  description: 'Observed state, written only by the kubebus status writer',
  properties: {
    phase: { type: 'string', enum: ['Pending', 'Provisioning', 'Ready', 'Failed', 'Deleting'] },
    readyReplicas: { type: 'integer', minimum: 0 },
    endpoint: { type: 'string' },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    conditions: {
      type: 'array',
      items: condition,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
  },
};

const DNS_1035 = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
const MAX_NAME = 52;

export function databaseClusterCrd() {
  const spec = structural(
    z.toJSONSchema(DatabaseClusterSpecSchema, {
      target: 'openapi-3.0',
      io: 'input',
      unrepresentable: 'any',
    }),
  ) as Schema;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        plural: PLURAL,
        singular: 'databasecluster',
        kind: KIND,
        listKind: `${KIND}List`,
        shortNames: ['dbc'],
        categories: ['kubebus'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
            { name: 'Version', type: 'string', jsonPath: '.spec.version' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'A replicated PostgreSQL or MySQL cluster, run by the kubebus example operator',
              required: ['spec'],
              // The Service and StatefulSet take the cluster's name, so it must be a
              // DNS-1035 label; 52 characters leave room for the StatefulSet's
              // controller-revision-hash label (name + '-' + 10). Refused at
              // admission: a name that can never work is never accepted.
              'x-kubernetes-validations': [
                {
                  rule: `self.metadata.name.matches('${DNS_1035}') && size(self.metadata.name) <= ${MAX_NAME}`,
                  message: `the name must be at most ${MAX_NAME} lower-case letters, digits and '-', start with a letter and end with a letter or digit (no dots): it names the cluster's Service and StatefulSet`,
                  reason: 'FieldValueInvalid',
                },
              ],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { ...spec, description: 'Desired state of the cluster' },
                status: statusSchema,
              },
            },
          },
        },
      ],
    },
  };
}
