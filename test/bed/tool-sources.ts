// What the test tools are and where they come from: kustomize and helm at the
// versions test/bed/tools/go.mod pins (so the release archives and the Go
// build give the same tools), the Go modules whose CRD files the deployment
// tests check against (pinned with their go.sum `h1:` hash), and the base URLs
// (mirrors and air-gapped sites set their own).
import { readFileSync } from 'node:fs';
import { downloadSettings, requiredVersion } from './archive-sources.js';

export const DEFAULT_HELM_RELEASES_URL = 'https://get.helm.sh';
export const DEFAULT_KUSTOMIZE_RELEASES_URL =
  'https://github.com/kubernetes-sigs/kustomize/releases/download';
export const DEFAULT_GOPROXY = 'https://proxy.golang.org';

export interface ToolVersions {
  readonly kustomize: string;
  readonly helm: string;
}

/** The versions test/bed/tools/build.sh builds. */
export function pinnedTools(): ToolVersions {
  const goMod = readFileSync(new URL('./tools/go.mod', import.meta.url), 'utf8');
  const kustomize = requiredVersion(goMod, 'sigs.k8s.io/kustomize/kustomize/v5');
  const helm = requiredVersion(goMod, 'helm.sh/helm/v3');
  if (kustomize === undefined || helm === undefined)
    throw new Error('test/bed/tools/go.mod pins no kustomize or helm version');
  return { kustomize, helm };
}

export type CrdSet = 'knative' | 'prometheus-operator';

export interface CrdModule {
  readonly set: CrdSet;
  readonly module: string;
  readonly version: string;
  /** what go.sum and the checksum database record for the module's zip */
  readonly h1: string;
  /** path in the module → the file name kubebus gives it */
  readonly files: ReadonlyMap<string, string>;
}

/**
 * The Knative releases whose CRDs deploy/knative is checked against (Service,
 * ApiServerSource, Broker, Trigger), and the Prometheus Operator release whose
 * CRDs (PodMonitor, PrometheusRule) the generated monitoring is checked against.
 */
export const CRD_MODULES: readonly CrdModule[] = [
  {
    set: 'knative',
    module: 'knative.dev/eventing',
    version: 'v0.45.0',
    h1: 'h1:LwNmhsw94isfEFOtjN1tpcduD5EzTKo4nbenTxSLd4o=',
    files: new Map([
      ['config/core/resources/apiserversource.yaml', 'apiserversource.yaml'],
      ['config/core/resources/broker.yaml', 'broker.yaml'],
      ['config/core/resources/trigger.yaml', 'trigger.yaml'],
    ]),
  },
  {
    set: 'knative',
    module: 'knative.dev/serving',
    version: 'v0.45.0',
    h1: 'h1:+eOEwSE5+NmhQUUfARHGdSI1gwavddiPMKjl4+sHCjE=',
    files: new Map([['config/core/300-resources/service.yaml', 'service.yaml']]),
  },
  {
    set: 'prometheus-operator',
    module: 'github.com/prometheus-operator/prometheus-operator',
    version: 'v0.85.0',
    h1: 'h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s=',
    files: new Map([
      [
        'example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml',
        'monitoring.coreos.com_podmonitors.yaml',
      ],
      [
        'example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml',
        'monitoring.coreos.com_prometheusrules.yaml',
      ],
    ]),
  },
];

export interface ToolSettings {
  /** false with KUBEBUS_NO_DOWNLOAD=1: nothing is fetched */
  readonly enabled: boolean;
  readonly helmReleasesUrl: string;
  readonly kustomizeReleasesUrl: string;
  /** the first proxy of GOPROXY (`direct` and `off` are not proxies), else undefined */
  readonly goproxy: string | undefined;
  readonly archivesDir: string;
  readonly sumsFile?: string;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');
const given = (value: string | undefined) =>
  value === undefined || value === '' ? undefined : value;

/** Go's GOPROXY: a list split by `,` or `|`; `off` ends it, `direct` is no proxy. */
export function firstProxy(goproxy: string | undefined): string | undefined {
  for (const entry of (goproxy ?? DEFAULT_GOPROXY).split(/[,|]/)) {
    const url = entry.trim();
    if (url === 'off') return undefined;
    if (url !== '' && url !== 'direct') return trimSlash(url);
  }
  return undefined;
}

export function toolSettings(
  env: NodeJS.ProcessEnv,
  servers: { readonly enabled: boolean; readonly archivesDir: string; readonly sumsFile?: string },
): ToolSettings {
  return {
    ...servers,
    helmReleasesUrl: trimSlash(
      given(env['KUBEBUS_HELM_RELEASES_URL']) ?? DEFAULT_HELM_RELEASES_URL,
    ),
    kustomizeReleasesUrl: trimSlash(
      given(env['KUBEBUS_KUSTOMIZE_RELEASES_URL']) ?? DEFAULT_KUSTOMIZE_RELEASES_URL,
    ),
    goproxy: firstProxy(given(env['GOPROXY'])),
  };
}

/** The tool settings of `env`, on top of the servers' (cache, KUBEBUS_NO_DOWNLOAD, sums). */
export const toolSettingsOf = (env: NodeJS.ProcessEnv): ToolSettings =>
  toolSettings(env, downloadSettings(env));
