// NATS with JetStream on file storage, for the kustomize base: a client
// Service, a headless Service for stable route names (nats-0.nats-headless),
// a StatefulSet of one (an overlay makes it a cluster of 3), a
// PodDisruptionBudget and a NetworkPolicy. Every password of the generated
// nats-server.conf reaches the container from the NATS credentials Secret;
// its certificate from the TLS Secret (cert-manager's, see nats-certificates.ts),
// reread on renewal by the config reloader (nats-config-reloader.ts).
// Monitoring answers on the pod's loopback only, so the probes run in the pod.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { SHARED_NATS_USERS, natsUserOf, passwordVariableOf } from './names.js';
import { containerSecurityContext, podSecurityContext } from './pod-security.js';
import {
  NATS_CONFIG_DIR,
  NATS_CONFIG_FILE,
  NATS_PID_FILE,
  natsConfigReloader,
  pidMount,
  pidVolume,
} from './nats-config-reloader.js';
import { NATS_TLS_DIR } from './nats-tls-config.js';
import { stateUserOf } from './nats-users.js';
import { DEFAULT_NATS_TLS_SECRET, type PackageSettings } from './settings.js';

export const NATS_IMAGE = 'nats:2.12-alpine';

/** Every NATS user of the package: its Secret key and password variable. */
export function natsUsersOfPackage(operator: Operator, roles: readonly Role[]): string[] {
  return [
    SHARED_NATS_USERS[0],
    ...roles.map((role) => natsUserOf(operator, role)),
    ...SHARED_NATS_USERS.slice(1),
    // the reconciler's second user, in the operator's state account (nats-users.ts)
    ...(operator.setup !== undefined && roles.includes('reconciler')
      ? [stateUserOf(operator)]
      : []),
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
  const healthz = (query: string) => ({
    exec: { command: ['wget', '-q', '-O', '/dev/null', `http://127.0.0.1:8222/healthz?${query}`] },
  });
  const tlsSecret = settings.natsTlsSecret ?? DEFAULT_NATS_TLS_SECRET;
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
            // the reloader signals nats-server (SIGHUP) when a certificate is renewed
            shareProcessNamespace: true,
            containers: [
              {
                name: 'nats',
                image: NATS_IMAGE,
                args: [
                  '-c',
                  NATS_CONFIG_FILE,
                  '--server_name',
                  '$(POD_NAME)',
                  '--pid',
                  NATS_PID_FILE,
                ],
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
                  { name: 'config', mountPath: NATS_CONFIG_DIR },
                  { name: 'data', mountPath: '/data' },
                  { name: 'tls', mountPath: NATS_TLS_DIR, readOnly: true },
                  pidMount,
                ],
              },
              natsConfigReloader(),
            ],
            volumes: [
              { name: 'config', configMap: { name: 'nats-config' } },
              { name: 'tls', secret: { secretName: tlsSecret } },
              pidVolume,
            ],
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
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          // kubebus' processes (every operator's roles, the topology step)
          {
            from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kubebus' } } }],
            ports: [{ protocol: 'TCP', port: 4222 }],
          },
          // the other servers of the cluster (monitoring, 8222, is on loopback only)
          {
            from: [{ podSelector: { matchLabels: selector } }],
            ports: [{ protocol: 'TCP', port: 6222 }],
          },
        ],
        egress: [
          // DNS (the route names), and the routes to the other servers
          {
            ports: [
              { protocol: 'UDP', port: 53 },
              { protocol: 'TCP', port: 53 },
            ],
          },
          {
            to: [{ podSelector: { matchLabels: selector } }],
            ports: [{ protocol: 'TCP', port: 6222 }],
          },
        ],
      },
    },
  ];
}
