// The topology step (ADR 0010, 0015): `kubebus topology apply <operator>` as
// the NATS admin user creates and updates kubebus' streams and buckets and the
// operator's durable consumers, which the roles' users may not. The roles wait, not ready, until it has run. The Helm chart
// makes it a pre-install/pre-upgrade hook; with kustomize, delete the Job
// before applying an upgrade that changes it (a Job's template is immutable).
import type { Operator } from '@kubebus/shared/definition';
import { natsCaMounts, natsCaVolumes, natsEnv } from './nats-env.js';
import { operatorLabels } from './names.js';
import {
  containerSecurityContext,
  podSecurityContext,
  tmpMount,
  tmpVolume,
} from './pod-security.js';
import type { PackageSettings } from './settings.js';

export function topologyJobName(operator: Operator): string {
  return `kubebus-${operator.name}-topology`;
}

export function topologyJobOf(
  operator: Operator,
  settings: PackageSettings,
  annotations: Readonly<Record<string, string>> = {},
): object {
  const labels = { ...operatorLabels(operator), 'app.kubernetes.io/component': 'topology' };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: topologyJobName(operator),
      namespace: settings.namespace,
      labels: { ...labels, ...settings.extraLabels },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: {
      backoffLimit: 20, // NATS may still be starting
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'OnFailure',
          // it talks to NATS only
          automountServiceAccountToken: false,
          securityContext: podSecurityContext,
          containers: [
            {
              name: 'topology',
              image: settings.image,
              imagePullPolicy: settings.imagePullPolicy,
              // the bundled operator: its roles' durable consumers are created here too
              args: [
                'topology',
                'apply',
                settings.module,
                '--replicas',
                String(settings.streamReplicas),
                // the streams' and buckets' sizes, to fit NATS' volume (docs/security.md)
                ...(settings.storageArgument === undefined ? [] : [settings.storageArgument]),
              ],
              env: natsEnv(settings, 'admin'),
              resources: settings.resources.topology,
              securityContext: containerSecurityContext,
              volumeMounts: [tmpMount, ...natsCaMounts(settings)],
            },
          ],
          volumes: [tmpVolume, ...natsCaVolumes(settings)],
        },
      },
    },
  };
}
