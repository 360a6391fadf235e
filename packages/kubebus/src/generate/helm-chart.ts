// The Helm chart: the same objects as the kustomize base, with what an
// installer changes taken from values.yaml (image, replicas and resources
// per role, the NATS URL, credentials and TLS Secrets, the namespace). The
// topology step is a pre-install/pre-upgrade hook, deleted once it succeeds
// and before it is created again, so an upgrade runs it with no manual Job
// deletion. NATS itself is not in the chart: the hook runs before anything
// of the release exists, so NATS and its credentials Secret must be there
// first (nats/nats-server.conf beside the chart is its configuration).
// Layout and value names follow Kubebuilder's helm plugin (crd.enable,
// networkPolicy.enable, the CRD kept on uninstall).
import { stringify } from 'yaml';
import { crdOf } from '../api/crd.js';
import { serviceTarget } from '../api/conversion-target.js';
import { conversionWebhookObjects, isVersioned } from './conversion-webhook.js';
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { deploymentsOf } from './deployments.js';
import { disruptionBudgetsOf } from './disruption-budgets.js';
import { block, helmTemplate, value, when } from './helm-template.js';
import { KUBE_PROMETHEUS_STACK_RELEASE, monitoringOf } from './monitoring.js';
import { natsUsersOfPackage } from './nats-statefulset.js';
import { KUBE_PROMETHEUS_STACK, networkPoliciesOf } from './network-policies.js';
import { rbacOf } from './rbac.js';
import {
  DEFAULT_NATS_SECRET,
  DEFAULT_NATS_TLS_SECRET,
  DEFAULT_NATS_TLS_URL,
  DEFAULT_REPLICAS,
  DEFAULT_RESOURCES,
  HEALTH_PORT,
  METRICS_PORT,
  type PackageSettings,
} from './settings.js';
import { topologyJobOf } from './topology-job.js';
import { yamlDocuments } from './yaml-documents.js';

/** The values key of a role (`statusWriter`: Helm paths cannot hold '-'). */
const valuesKey = (role: Role | 'topology') =>
  role.replace(/-([a-z])/g, (_dash, letter: string) => letter.toUpperCase());

const NAMESPACE = '.Values.namespace | default .Release.Namespace';

function helmSettings(module: string, watchNamespaces: readonly string[]): PackageSettings {
  const perRole = <T>(of: (role: Role) => T) => ({
    watcher: of('watcher'),
    reconciler: of('reconciler'),
    'status-writer': of('status-writer'),
  });
  return {
    namespace: value(NAMESPACE),
    // by digest when image.digest is set (a release pins it), else by tag
    image: [
      value('.Values.image.repository'),
      value('if .Values.image.digest'),
      `@${value('.Values.image.digest')}`,
      value('else'),
      `:${value('.Values.image.tag | default .Chart.AppVersion')}`,
      value('end'),
    ].join(''),
    imagePullPolicy: value('.Values.image.pullPolicy'),
    module,
    natsUrl: value('.Values.nats.url'),
    natsSecret: value('.Values.nats.credentialsSecret'),
    natsTlsSecret: value('.Values.nats.tls.secret'),
    replicas: perRole((role) => value(`.Values.${valuesKey(role)}.replicas`)),
    resources: {
      ...perRole((role) => block(`.Values.${valuesKey(role)}.resources`)),
      topology: block('.Values.topology.resources'),
    },
    streamReplicas: value('.Values.nats.streamReplicas | quote'),
    // one quoted argument whatever the value holds (a `#`, a `: `, a line break)
    storageArgument: value('printf "--storage=%s" (.Values.nats.storage | default "") | quote'),
    watchNamespaces,
    extraLabels: {
      'helm.sh/chart': `${value('.Chart.Name')}-${value('.Chart.Version')}`,
      'app.kubernetes.io/managed-by': value('.Release.Service'),
    },
    healthPort: HEALTH_PORT,
    metricsPort: METRICS_PORT,
    extraEnv: perRole((role) => `.Values.${valuesKey(role)}.env`),
    extraEgress: '.Values.networkPolicy.extraEgress',
  };
}

/** repository, tag and digest of an image reference (`repo:tag`, `repo@sha256:…`, `repo:tag@sha256:…`). */
export function splitImage(image: string): { repository: string; tag: string; digest: string } {
  const at = image.indexOf('@');
  const named = at === -1 ? image : image.slice(0, at);
  const digest = at === -1 ? '' : image.slice(at + 1);
  const colon = named.lastIndexOf(':');
  return colon > named.lastIndexOf('/')
    ? { repository: named.slice(0, colon), tag: named.slice(colon + 1), digest }
    : { repository: named, tag: '', digest };
}

function valuesYaml(operator: Operator, roles: readonly Role[], image: string): string {
  const { repository, tag, digest } = splitImage(image);
  const indent = (object: object, spaces: number) =>
    stringify(object).trimEnd().replace(/^/gm, ' '.repeat(spaces));
  const role = (name: Role | 'topology') => {
    const lines = [`${valuesKey(name)}:`];
    if (name !== 'topology') lines.push(`  replicas: ${DEFAULT_REPLICAS[name]}`);
    lines.push('  resources:', indent(DEFAULT_RESOURCES[name], 4));
    if (name !== 'topology') lines.push('  env: []');
    return lines.join('\n');
  };
  return `# Values of the ${operator.name} chart, written by \`kubebus generate\`.

# where the operator runs; empty: the release's namespace (helm install -n <ns>)
namespace: ""

# an image whose entrypoint is the kubebus binary, with the operator module inside
image:
  repository: ${repository}
  # empty: the chart's appVersion
  tag: ${JSON.stringify(tag)}
  # sha256:…: the image by digest, tag ignored (what a release should pin:
  # a tag can be moved to another image)
  digest: ${JSON.stringify(digest)}
  pullPolicy: IfNotPresent

nats:
  # tls://: the client refuses a server that does not speak TLS
  url: ${DEFAULT_NATS_TLS_URL}
  tls:
    # the NATS servers' TLS Secret (cert-manager's, as the kustomize package's
    # cert-manager/ makes it, or one of yours with ca.crt): the roles mount
    # only its ca.crt, to verify the servers
    secret: ${DEFAULT_NATS_TLS_SECRET}
  # a Secret holding each NATS user's password under the user's name:
  # ${natsUsersOfPackage(operator, roles).join(', ')}
  credentialsSecret: ${DEFAULT_NATS_SECRET}
  # replicas of kubebus' streams and buckets: 1 on one NATS server, 3 in a cluster
  streamReplicas: 1
  # sizes the topology step sets, e.g. "events=2GiB,performed=128MiB" (the
  # defaults: events=1GiB,work=256MiB,status=256MiB,dlq=256MiB,
  # dlq-message=128KiB,outcomes=256MiB,buckets=16MiB, performed=64MiB per
  # operator); a size not named keeps what the stream has. The streams are
  # shared by every kubebus operator on the NATS account, and must fit its
  # max_file (docs/security.md, "Bounded storage" and "Per account")
  storage: ""

# replicas, resources and env per role; watchers run active-active, reconcilers
# share the work partitions through leases. env: the operator's own variables,
# after kubebus' own, e.g. [{ name: REGISTRY_URL, value: "http://registry:8080" }]
# or a valueFrom of a Secret's key
${roles.map(role).join('\n')}
# the topology step (a pre-install/pre-upgrade hook)
${role('topology')}

crd:
  # install and upgrade the CRD with the chart; it is kept on uninstall (deleting
  # it would delete every ${operator.for.kind})
  enable: true

podDisruptionBudget:
  enable: true

networkPolicy:
  # deny ingress but the metrics port; egress to DNS, the apiserver (and any
  # address on 443) and NATS only
  enable: true
  # egress rules the operator's own calls need beyond those, e.g.
  # [{ to: [{ ipBlock: { cidr: 10.0.0.0/8 } }], ports: [{ protocol: TCP, port: 8080 }] }]
  extraEgress: []
  # where Prometheus scrapes from
  metrics:
    namespace: ${KUBE_PROMETHEUS_STACK.namespace}
    podLabels:
${indent(KUBE_PROMETHEUS_STACK.podLabels as object, 6)}

monitoring:
  # a PodMonitor and a PrometheusRule (needs the Prometheus Operator's CRDs)
  enable: false
  # kube-prometheus-stack selects both by release: <its Helm release name>
  release: ${KUBE_PROMETHEUS_STACK_RELEASE}
`;
}

export function helmChartFiles(
  operator: Operator,
  roles: readonly Role[],
  options: {
    readonly image: string;
    readonly module: string;
    readonly watchNamespaces: readonly string[];
  },
): Record<string, string> {
  const settings = helmSettings(options.module, options.watchNamespaces);
  const template = (objects: readonly object[], what: string) =>
    helmTemplate(yamlDocuments(objects, `${what} (kubebus generate)`));
  const crd = crdOf(operator.for, serviceTarget(operator.for, settings.namespace));
  const keptCrd = {
    ...crd,
    metadata: {
      ...crd.metadata,
      annotations: { ...crd.metadata.annotations, 'helm.sh/resource-policy': 'keep' },
    },
  };
  const { tag } = splitImage(options.image);
  return {
    'Chart.yaml': stringify({
      apiVersion: 'v2',
      name: operator.name,
      description: `The ${operator.name} operator (${operator.for.kind}.${operator.for.group}), run by kubebus on NATS JetStream`,
      type: 'application',
      version: '0.1.0',
      appVersion: tag === '' ? '0.1.0' : tag,
      keywords: ['operator', 'kubebus', operator.for.kind.toLowerCase()],
    }),
    'values.yaml': valuesYaml(operator, roles, options.image),
    '.helmignore': '.DS_Store\n*.tmp\n*.orig\n',
    'templates/crd.yaml': when('.Values.crd.enable', template([keptCrd], 'The CRD')),
    ...(isVersioned(operator)
      ? {
          'templates/conversion-webhook.yaml': template(
            conversionWebhookObjects(operator, settings),
            "The conversion webhook's Service and certificate (needs cert-manager)",
          ),
        }
      : {}),
    'templates/rbac.yaml': template(
      rbacOf(operator, settings.namespace, roles, options.watchNamespaces),
      'ServiceAccounts and least-privilege RBAC per role',
    ),
    'templates/deployments.yaml': template(
      deploymentsOf(operator, roles, settings),
      'The roles, one Deployment each',
    ),
    'templates/pod-disruption-budgets.yaml': when(
      '.Values.podDisruptionBudget.enable',
      template(disruptionBudgetsOf(operator, roles, settings), 'PodDisruptionBudgets'),
    ),
    'templates/topology-job.yaml': template(
      [
        topologyJobOf(operator, settings, {
          'helm.sh/hook': 'pre-install,pre-upgrade',
          'helm.sh/hook-weight': '0',
          'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
        }),
      ],
      'The topology step, a hook: it runs before every install and upgrade',
    ),
    'templates/network-policies.yaml': when(
      '.Values.networkPolicy.enable',
      template(
        networkPoliciesOf(operator, settings, {
          namespace: value('.Values.networkPolicy.metrics.namespace'),
          podLabels: block('.Values.networkPolicy.metrics.podLabels'),
        }),
        'NetworkPolicies',
      ),
    ),
    'templates/monitoring.yaml': when(
      '.Values.monitoring.enable',
      template(
        monitoringOf(operator, roles, settings, value('.Values.monitoring.release')),
        'A PodMonitor scraping /metrics over HTTPS with its own token, and the alerts',
      ),
    ),
    'templates/NOTES.txt': `${operator.name} runs in namespace {{ ${NAMESPACE} }}: kubebus run, one Deployment per role.
The topology step ran as a hook, as NATS user admin, against {{ .Values.nats.url }}.
  kubectl -n {{ ${NAMESPACE} }} get deployments,pods -l app.kubernetes.io/instance=${operator.name}
  kubectl get ${operator.for.plural}.${operator.for.group} -A
`,
  };
}
