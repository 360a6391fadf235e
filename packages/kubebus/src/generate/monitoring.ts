// Monitoring for the Prometheus Operator: a PodMonitor for the roles'
// /metrics and the alerts a platform team pages on, each with a runbook.
// /metrics is HTTPS behind a TokenReview and a SubjectAccessReview
// (metrics-rbac.ts): the PodMonitor scrapes with the token of a scraper
// ServiceAccount bound to the metrics-reader ClusterRole. A PodMonitor can
// only name Secrets of its own namespace, so the token is a Secret of type
// service-account-token here. With the metrics certificate Secret
// (metrics-certificate.ts) the PodMonitor verifies the roles' certificate
// against its CA; without it the roles' certificate is self-signed, unverified.
// kube-prometheus-stack's Prometheus selects PodMonitors and PrometheusRules
// by `release: <its Helm release>` (podMonitorSelectorNilUsesHelmValues,
// ruleSelectorNilUsesHelmValues), `kube-prometheus-stack` when installed
// under its own name: that is the default label here.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { scrapeTlsConfig } from './metrics-certificate.js';
import { metricsReaderRoleName } from './metrics-rbac.js';
import { operatorLabels } from './names.js';
import { operatorPodSelector } from './network-policies.js';
import type { PackageSettings } from './settings.js';

/** The Helm release name of kube-prometheus-stack, which its Prometheus selects on. */
export const KUBE_PROMETHEUS_STACK_RELEASE = 'kube-prometheus-stack';

/** Where the runbooks are: docs/deploy.md of the kubebus repository, one anchor per alert. */
export const RUNBOOK_BASE = 'https://github.com/kubebus/kubebus/blob/main/docs/deploy.md';

export const runbookUrl = (alert: string) => `${RUNBOOK_BASE}#${alert.toLowerCase()}`;

interface Alert {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly severity: 'critical' | 'warning' | 'info';
  readonly summary: string;
  readonly description: string;
}

/** The alerts, scoped to the operator's namespace (`ns` is a PromQL matcher value). */
function alertsOf(operatorName: string, ns: string): Alert[] {
  const at = `namespace="${ns}"`;
  return [
    {
      alert: 'KubebusDeadLettersGrowing',
      expr: `sum by (controller) (increase(controller_runtime_reconcile_total{${at},result="dead_letter"}[15m])) > 0 or sum(increase(kubebus_dead_letters_total{${at}}[15m])) > 0`,
      for: '5m',
      severity: 'warning',
      summary: `${operatorName}: objects are being dead-lettered`,
      description:
        '{{ $labels.controller }} parked objects in the DLQ in the last 15 minutes: kubebus dlq list, then kubebus status <object>.',
    },
    {
      alert: 'KubebusConsumerBacklog',
      expr: `max by (consumer) (kubebus_consumer_pending{${at}}) > 500`,
      for: '10m',
      severity: 'warning',
      summary: `${operatorName}: a partition's work is piling up`,
      description:
        'Consumer {{ $labels.consumer }} has {{ $value }} undelivered messages for 10 minutes: kubebus lag; more reconciler replicas or a higher KUBEBUS_QPS.',
    },
    {
      alert: 'KubebusReconcileErrorRate',
      expr: `sum by (controller) (rate(controller_runtime_reconcile_errors_total{${at}}[5m])) / sum by (controller) (rate(controller_runtime_reconcile_total{${at}}[5m])) > 0.1`,
      for: '10m',
      severity: 'warning',
      summary: `${operatorName}: more than 10 % of reconciles fail`,
      description:
        '{{ $labels.controller }}: see kubebus history for the errors and their trace ids.',
    },
    {
      alert: 'KubebusWatchRestarting',
      expr: `sum by (resource) (increase(kubebus_watch_restarts_total{${at}}[10m])) > 5`,
      for: '5m',
      severity: 'warning',
      summary: `${operatorName}: a watch keeps restarting`,
      description:
        'The watch of {{ $labels.resource }} restarted more than 5 times in 10 minutes: apiserver or network trouble.',
    },
    {
      alert: 'KubebusApiserverThrottling',
      expr: `sum by (pod) (rate(rest_client_requests_total{${at},code="429"}[5m])) > 0`,
      for: '10m',
      severity: 'info',
      summary: `${operatorName}: the apiserver answers 429`,
      description:
        '{{ $labels.pod }} is being rate-limited by the apiserver (API Priority and Fairness); writes are retried.',
    },
    {
      alert: 'KubebusEventsDropped',
      // a moved partition, a stop or a deleted namespace drops Events routinely
      expr: `sum by (pod, reason) (increase(kubebus_events_dropped_total{${at},reason!~"fenced|stopped|namespace_gone"}[15m])) > 0`,
      for: '5m',
      severity: 'info',
      summary: `${operatorName}: Kubernetes Events are not being recorded`,
      description:
        '{{ $labels.pod }} dropped Events ({{ $labels.reason }}) in the last 15 minutes; reconciles go on. Its log says why: a role without events.create, an Event the apiserver finds invalid, an Event rate limit, the apiserver down.',
    },
    {
      alert: 'KubebusOnceCallRepeated',
      // a takeover or an unrecorded call: where ctx.once may call twice (ADR 0035)
      expr: `sum by (controller) (increase(kubebus_once_takeovers_total{${at}}[1h])) > 0 or sum by (controller) (increase(kubebus_once_calls_total{${at},outcome="unrecorded"}[1h])) > 0`,
      for: '0m',
      severity: 'warning',
      summary: `${operatorName}: an external call (ctx.once) may have been made twice`,
      description:
        '{{ $labels.controller }} took over a claim left by a reconcile that stopped between its call and its record, or made a call whose record NATS refused, in the last hour. Without `done` the call may have been made again: check the receiver.',
    },
    {
      alert: 'KubebusOnceCallsRefused',
      // a full bucket (or NATS refusing it) stops every ctx.once call, retried quietly
      // refusals over 10 minutes on end: one refusal (a NATS blip) stays under the 5 minutes' rate
      expr: `sum by (controller) (rate(kubebus_once_calls_total{${at},outcome="refused"}[5m])) > 0`,
      for: '10m',
      severity: 'warning',
      summary: `${operatorName}: external calls (ctx.once) are refused`,
      description:
        "{{ $labels.controller }} could not claim ctx.once calls for 10 minutes: no such call is made, and the reconciles that need one are retried without end. The reconciler's log says why: the operator's performed bucket full, or its NATS user refused.",
    },
    {
      alert: 'KubebusBusDisconnected',
      // not readiness (ADR 0036): a pod stays ready, and serves conversions, through an outage
      expr: `max by (pod) (kubebus_nats_connected{${at}} == 0)`,
      for: '5m',
      severity: 'critical',
      summary: `${operatorName}: a pod has lost NATS`,
      description:
        '{{ $labels.pod }} has not reached NATS for 5 minutes: it watches, reconciles or writes nothing meanwhile. Its log says why (nats disconnected, a refused password); kubebus topology check shows the NATS side.',
    },
    {
      alert: 'KubebusQueueStuck',
      expr: `max by (controller) (workqueue_depth{${at}}) > 0 and sum by (controller) (rate(controller_runtime_reconcile_total{${at}}[10m])) == 0`,
      for: '15m',
      severity: 'critical',
      summary: `${operatorName}: work waits and nothing is reconciled`,
      description:
        '{{ $labels.controller }} has queued work and finished no reconcile for 15 minutes.',
    },
  ];
}

export const ALERT_NAMES = alertsOf('', '').map((alert) => alert.alert);

/** The ServiceAccount whose token Prometheus scrapes /metrics with. */
export const metricsScraperName = (operator: Operator) =>
  `kubebus-${operator.name}-metrics-scraper`;

export function monitoringOf(
  operator: Operator,
  roles: readonly Role[],
  settings: PackageSettings,
  /** the `release` label Prometheus selects on: kube-prometheus-stack's release name */
  release: string = KUBE_PROMETHEUS_STACK_RELEASE,
): object[] {
  const name = `kubebus-${operator.name}`;
  const labels = { ...operatorLabels(operator), ...settings.extraLabels, release };
  const metadata = { name, namespace: settings.namespace, labels };
  const scraper = metricsScraperName(operator);
  const tokenSecret = `${scraper}-token`;
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { ...metadata, name: scraper },
      automountServiceAccountToken: false,
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        ...metadata,
        name: tokenSecret,
        annotations: { 'kubernetes.io/service-account.name': scraper },
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: scraper, labels },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: metricsReaderRoleName(operator),
      },
      subjects: [{ kind: 'ServiceAccount', name: scraper, namespace: settings.namespace }],
    },
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata,
      spec: {
        selector: {
          matchLabels: operatorPodSelector(operator),
          matchExpressions: [
            { key: 'app.kubernetes.io/component', operator: 'In', values: [...roles] },
          ],
        },
        podMetricsEndpoints: [
          {
            port: 'metrics',
            path: '/metrics',
            interval: '30s',
            scheme: 'https',
            authorization: { type: 'Bearer', credentials: { name: tokenSecret, key: 'token' } },
            tlsConfig: scrapeTlsConfig(operator, settings),
          },
        ],
      },
    },
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata,
      spec: {
        groups: [
          {
            name: `kubebus-${operator.name}`,
            rules: alertsOf(operator.name, settings.namespace).map((alert) => ({
              alert: alert.alert,
              expr: alert.expr,
              for: alert.for,
              labels: { severity: alert.severity },
              annotations: {
                summary: alert.summary,
                description: alert.description,
                runbook_url: runbookUrl(alert.alert),
              },
            })),
          },
        ],
      },
    },
  ];
}
