// What a generated package is configured with. The kustomize base takes plain
// values; the Helm chart takes template expressions (helm-template.ts) in
// their place, so both come from the same object builders.
import type { Role } from '../host/role-configs.js';

/** A value, or a Helm template expression standing for one (see helm-template.ts). */
export type Setting<T> = T | string;

export interface Resources {
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly limits: { readonly memory: string };
}

export interface PackageSettings {
  readonly namespace: Setting<string>;
  /** the image whose entrypoint is the kubebus binary, with the operator module inside */
  readonly image: Setting<string>;
  readonly imagePullPolicy: Setting<string>;
  /** the operator module's path in the image: `kubebus run <module> --role …` */
  readonly module: string;
  readonly natsUrl: Setting<string>;
  /** the Secret holding each NATS user's password under the user's name */
  readonly natsSecret: Setting<string>;
  /** the NATS servers' TLS Secret (cert-manager's tls.crt, tls.key, ca.crt); clients mount its ca.crt */
  readonly natsTlsSecret?: Setting<string>;
  readonly replicas: Readonly<Record<Role, Setting<number>>>;
  /** a role's container resources; a string is a Helm block expression */
  readonly resources: Readonly<Record<Role | 'topology', Resources | string>>;
  /** replicas of kubebus' streams: 1 on one NATS server, 3 in a cluster */
  readonly streamReplicas: Setting<number>;
  /** the topology step's `--storage=…` argument (the Helm chart's nats.storage); unset: none, every size kept */
  readonly storageArgument?: Setting<string>;
  /** namespaces the operator watches; empty: every namespace (ClusterRoles) */
  readonly watchNamespaces: readonly string[];
  /** labels added to every object's metadata (Helm's managed-by and chart) */
  readonly extraLabels: Readonly<Record<string, string>>;
  /** the probes' port of every role (/healthz, /readyz; plain HTTP for the kubelet) */
  readonly healthPort: number;
  /** the HTTPS port of /metrics, behind TokenReview and SubjectAccessReview */
  readonly metricsPort: number;
  /**
   * /metrics' serving certificate (tls.crt, tls.key, ca.crt; cert-manager's,
   * metrics-certificate.ts): mounted by every role, verified by the PodMonitor.
   * Unset: a self-signed certificate made at start, not verified.
   */
  readonly metricsTlsSecret?: Setting<string>;
  /** the Helm chart's `<role>.env`: a role's own variables (the operator's settings), spliced after kubebus' */
  readonly extraEnv?: Readonly<Record<Role, string>>;
  /** the Helm chart's `networkPolicy.extraEgress`: egress rules the operator's outside calls need */
  readonly extraEgress?: string;
}

export const HEALTH_PORT = 8080;
/** controller-runtime's secure metrics port in Kubebuilder's scaffold */
export const METRICS_PORT = 8443;
export const DEFAULT_NAMESPACE = 'kubebus-system';
export const DEFAULT_NATS_URL = 'nats://nats:4222';
export const DEFAULT_NATS_SECRET = 'kubebus-nats';
/** the shipped NATS speaks TLS only, with certificates from this Secret */
export const DEFAULT_NATS_TLS_URL = 'tls://nats:4222';
export const DEFAULT_NATS_TLS_SECRET = 'nats-tls';

/** Replicas per role: watchers run active-active, reconcilers share partitions through leases. */
export const DEFAULT_REPLICAS: Readonly<Record<Role, number>> = {
  watcher: 2,
  reconciler: 3,
  'status-writer': 2,
};

export const DEFAULT_RESOURCES: Readonly<Record<Role | 'topology', Resources>> = {
  watcher: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
  reconciler: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
  'status-writer': { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '256Mi' } },
  topology: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
};

/** Plain settings for the kustomize base. */
export function plainSettings(options: {
  readonly namespace: string;
  readonly image: string;
  readonly module: string;
  readonly watchNamespaces: readonly string[];
}): PackageSettings {
  return {
    namespace: options.namespace,
    image: options.image,
    imagePullPolicy: 'IfNotPresent',
    module: options.module,
    natsUrl: DEFAULT_NATS_TLS_URL,
    natsSecret: DEFAULT_NATS_SECRET,
    natsTlsSecret: DEFAULT_NATS_TLS_SECRET,
    replicas: DEFAULT_REPLICAS,
    resources: DEFAULT_RESOURCES,
    streamReplicas: 1,
    watchNamespaces: options.watchNamespaces,
    extraLabels: {},
    healthPort: HEALTH_PORT,
    metricsPort: METRICS_PORT,
  };
}
