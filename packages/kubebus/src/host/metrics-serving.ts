// How `kubebus run` serves /metrics, from its configuration: in the secure mode
// its own HTTPS port, each reader's token reviewed by the apiserver with the
// process's own credentials (its service account needs create on tokenreviews
// and subjectaccessreviews: generate/rbac.ts grants it).
import type { commonConfig } from '@kubebus/shared/config';
import { KubeClient, type KubeCredentials } from '@kubebus/shared/kube';
import {
  kubernetesMetricsAccess,
  restClientMetrics,
  type MetricsServing,
} from '@kubebus/shared/obs';

type MetricsConfig = ReturnType<typeof commonConfig>['metrics'];

export function metricsServingOf(
  config: MetricsConfig,
  kubeConfig: KubeCredentials,
  userAgent: string,
): MetricsServing {
  if (config.auth === 'none') return { mode: 'local' };
  return {
    mode: 'secure',
    host: config.host,
    port: config.port,
    tls: config.tls,
    access: (registry, log) => {
      const client = new KubeClient(kubeConfig, restClientMetrics(registry), {
        userAgent,
        timeoutMs: 10_000,
        log: log.child({ component: 'metrics-auth' }),
      });
      return kubernetesMetricsAccess(
        (path, body) => client.request(path, { method: 'POST', body }),
        log.child({ component: 'metrics-auth' }),
      );
    },
  };
}
