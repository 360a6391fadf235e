// NATS with JetStream on file storage, for the kustomize base: a client
// Service, a headless Service for stable route names (nats-0.nats-headless),
// a StatefulSet of one (an overlay makes it a cluster of 3), a
// PodDisruptionBudget and a NetworkPolicy. Every password of the generated
// nats-server.conf reaches the container from the NATS credentials Secret.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { SHARED_NATS_USERS, natsUserOf, passwordVariableOf } from './names.js';
import { containerSecurityContext, podSecurityContext } from './pod-security.js';
import type { PackageSettings } from './settings.js';

export const NATS_IMAGE = 'nats:2.12-alpine';

/** Every NATS user of the package: its Secret key and password variable. */
export function natsUsersOfPackage(operator: Operator, roles: readonly Role[]): string[] {
  return [
    SHARED_NATS_USERS[0],
    ...roles.map((role) => natsUserOf(operator, role)),
    ...SHARED_NATS_USERS.slice(1),
  ];
}

export function natsObjectsOf(
  operator: Operator,
  roles: readonly Role[],
  settings: PackageSettings,
): object[] {
  const labels = { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/part-of': 'kubebus' };
  const selector = { 'app.kubernetes.io/name': 'nats' };
  const metadata = (name: string) => ({ name, namespace: settings.namespace, labels });
  const healthz = (query: string) => ({ httpGet: { path: `/healthz?${query}`, port: 'monitor' } });
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata('nats'),
      spec: { selector, ports: [{ name: 'client', port: 4222, targetPort: 'client' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata('nats-headless'),
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector,
        ports: [
          { name: 'client', port: 4222, targetPort: 'client' },
          { name: 'cluster', port: 6222, targetPort: 'cluster' },
        ],
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: metadata('nats'),
      spec: {
        serviceName: 'nats-headless',
        replicas: 1,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 60, // JetStream flushes and steps down before exiting
            securityContext: { ...podSecurityContext, fsGroup: 1000 },
            containers: [
              {
                name: 'nats',
                image: NATS_IMAGE,
                args: ['-c', '/etc/nats/nats-server.conf', '--server_name', '$(POD_NAME)'],
                env: [
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  ...natsUsersOfPackage(operator, roles).map((user) => ({
                    name: passwordVariableOf(user),
                    valueFrom: { secretKeyRef: { name: settings.natsSecret, key: user } },
                  })),
                ],
                ports: [
                  { name: 'client', containerPort: 4222 },
                  { name: 'cluster', containerPort: 6222 },
                  { name: 'monitor', containerPort: 8222 },
                ],
                startupProbe: {
                  ...healthz('js-enabled-only=true'),
                  periodSeconds: 5,
                  failureThreshold: 60,
                },
                livenessProbe: healthz('js-enabled-only=true'),
                readinessProbe: healthz('js-server-only=true'),
                resources: {
                  requests: { cpu: '250m', memory: '256Mi' },
                  limits: { memory: '1Gi' },
                },
                securityContext: containerSecurityContext,
                volumeMounts: [
                  { name: 'config', mountPath: '/etc/nats' },
                  { name: 'data', mountPath: '/data' },
                ],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'nats-config' } }],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
          },
        ],
      },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: metadata('nats'),
      // a 3-node cluster keeps its quorum (2 of 3)
      spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: metadata('nats'),
      spec: {
        podSelector: { matchLabels: selector },
        policyTypes: ['Ingress'],
        ingress: [
          // kubebus' processes (every operator's roles, the topology step)
          {
            from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kubebus' } } }],
            ports: [{ protocol: 'TCP', port: 4222 }],
          },
          // the other servers of the cluster
          {
            from: [{ podSelector: { matchLabels: selector } }],
            ports: [{ protocol: 'TCP', port: 6222 }],
          },
        ],
      },
    },
  ];
}
