// One Deployment per role, each running `kubebus run <module> --role <role>`
// under the role's ServiceAccount and NATS user. What the roles must agree on
// (controller, partitions, watches) comes from the module itself: no
// KUBEBUS_CONTROLLERS, KUBEBUS_CONTROLLER or KUBEBUS_WORK_PARTITIONS here.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { metricsTlsEnv, metricsTlsMounts, metricsTlsVolumes } from './metrics-certificate.js';
import { natsCaMounts, natsCaVolumes, natsEnv } from './nats-env.js';
import { natsUserOf, operatorLabels, roleObjectName, selectorLabels } from './names.js';
import { stateUserOf } from './nats-users.js';
import {
  containerSecurityContext,
  podSecurityContext,
  tmpMount,
  tmpVolume,
} from './pod-security.js';
import type { PackageSettings } from './settings.js';
import { webhookContainerParts } from './conversion-webhook.js';
import { splice } from './helm-template.js';

const podName = { valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } };

function roleEnv(role: Role, settings: PackageSettings): object[] {
  // the watcher watches only there; the reconciler's upgrade sweep lists only there (its Roles)
  const namespaces =
    settings.watchNamespaces.length > 0
      ? [{ name: 'KUBEBUS_WATCH_NAMESPACES', value: settings.watchNamespaces.join(',') }]
      : [];
  switch (role) {
    case 'watcher':
      return [{ name: 'KUBEBUS_WATCHER_ID', ...podName }, ...namespaces];
    case 'reconciler':
      return [{ name: 'KUBEBUS_REPLICA_ID', ...podName }, ...namespaces];
    case 'status-writer':
      // each replica holds its own partition leases
      return [{ name: 'KUBEBUS_REPLICA_ID', ...podName }];
  }
}

/** `setup` keeps its external state in the operator's own NATS account, as its own user (ADR 0015). */
function stateEnv(operator: Operator, settings: PackageSettings): object[] {
  if (operator.setup === undefined) return [];
  const user = stateUserOf(operator);
  return [
    { name: 'KUBEBUS_STATE_NATS_USER', value: user },
    {
      name: 'KUBEBUS_STATE_NATS_PASSWORD',
      valueFrom: { secretKeyRef: { name: settings.natsSecret, key: user } },
    },
  ];
}

export function deploymentOf(operator: Operator, role: Role, settings: PackageSettings): object {
  const name = roleObjectName(operator, role);
  const selector = selectorLabels(operator, role);
  const webhook =
    role === 'reconciler'
      ? webhookContainerParts(operator)
      : { env: [], ports: [], mounts: [], volumes: [] };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: settings.namespace,
      labels: { ...operatorLabels(operator), ...selector, ...settings.extraLabels },
    },
    spec: {
      replicas: settings.replicas[role],
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...operatorLabels(operator), ...selector } },
        spec: {
          serviceAccountName: name,
          // in-flight reconciles finish and partitions are handed over before the pod goes
          ...(role === 'reconciler' ? { terminationGracePeriodSeconds: 60 } : {}),
          securityContext: podSecurityContext,
          containers: [
            {
              name: role,
              image: settings.image,
              imagePullPolicy: settings.imagePullPolicy,
              args: ['run', settings.module, '--role', role],
              env: [
                ...natsEnv(settings, natsUserOf(operator, role)),
                { name: 'KUBEBUS_STREAM_REPLICAS', value: String(settings.streamReplicas) },
                { name: 'KUBEBUS_HEALTH_PORT', value: String(settings.healthPort) },
                // /metrics over HTTPS, each reader's token reviewed (a self-signed certificate
                // unless KUBEBUS_METRICS_CERT and KUBEBUS_METRICS_KEY name mounted ones)
                { name: 'KUBEBUS_METRICS_AUTH', value: 'kubernetes' },
                { name: 'KUBEBUS_METRICS_PORT', value: String(settings.metricsPort) },
                ...metricsTlsEnv(settings),
                ...roleEnv(role, settings),
                ...(role === 'reconciler' ? stateEnv(operator, settings) : []),
                ...webhook.env,
                // the chart's <role>.env: the operator's own settings (an outside service's address)
                ...(settings.extraEnv === undefined ? [] : [splice(settings.extraEnv[role])]),
              ],
              ports: [
                { name: 'health', containerPort: settings.healthPort },
                { name: 'metrics', containerPort: settings.metricsPort },
                ...webhook.ports,
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'health' },
                periodSeconds: 10,
                failureThreshold: 3,
              },
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
              resources: settings.resources[role],
              securityContext: containerSecurityContext,
              volumeMounts: [
                tmpMount,
                ...natsCaMounts(settings),
                ...metricsTlsMounts(settings),
                ...webhook.mounts,
              ],
            },
          ],
          volumes: [
            tmpVolume,
            ...natsCaVolumes(settings),
            ...metricsTlsVolumes(settings),
            ...webhook.volumes,
          ],
        },
      },
    },
  };
}

export function deploymentsOf(
  operator: Operator,
  roles: readonly Role[],
  settings: PackageSettings,
): object[] {
  return roles.map((role) => deploymentOf(operator, role, settings));
}
