// The DatabaseCluster CustomResourceDefinition, generated from the zod spec
// (z.toJSONSchema) with the fix-ups a structural schema needs. The committed
// YAML under deploy/ is this object; a test fails when it is stale.
import { CONDITIONS_SCHEMA, openApiOf } from '@kubebus/shared/kube';
import { DatabaseClusterSpecSchema, GROUP, KIND, PLURAL, VERSION } from './spec.js';

type Schema = Record<string, unknown>;

const statusSchema: Schema = {
  type: 'object',
  description: 'Observed state, written only by the kubebus status writer',
  properties: {
    phase: { type: 'string', enum: ['Pending', 'Provisioning', 'Ready', 'Failed', 'Deleting'] },
    readyReplicas: { type: 'integer', minimum: 0 },
    endpoint: { type: 'string' },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    conditions: CONDITIONS_SCHEMA,
  },
};

const DNS_1035 = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
const MAX_NAME = 52;

export function databaseClusterCrd() {
  const spec = openApiOf(DatabaseClusterSpecSchema);
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
