// What test/integration/deploy.test.ts renders and applies: kustomize builds,
// helm lint and template of the generated charts, and server-side apply with
// strict field validation of each object to the test bed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { toolBinary } from '../bed/tools.js';
import { httpCall } from '../bed/http.js';
import type { TestBed } from '../bed/testbed.js';

export const file = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

const PLURALS: Record<string, string> = {
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  Service: 'services',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Job: 'jobs',
  PodDisruptionBudget: 'poddisruptionbudgets',
  NetworkPolicy: 'networkpolicies',
  CustomResourceDefinition: 'customresourcedefinitions',
  PodMonitor: 'podmonitors',
  PrometheusRule: 'prometheusrules',
  Broker: 'brokers',
  Trigger: 'triggers',
  ApiServerSource: 'apiserversources',
};

/** The object's URL (server-side apply is a PATCH on it). */
function objectUrl(manifest: Manifest): string {
  const base = manifest.apiVersion.includes('/')
    ? `/apis/${manifest.apiVersion}`
    : `/api/${manifest.apiVersion}`;
  const scope = manifest.metadata.namespace ? `/namespaces/${manifest.metadata.namespace}` : '';
  const resource = PLURALS[manifest.kind];
  if (resource === undefined) throw new Error(`no path for ${manifest.kind}`);
  return `${base}${scope}/${resource}/${manifest.metadata.name}`;
}

export const parseManifests = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((doc) => doc.toJSON() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);

/** `kubectl kustomize <dir>`, parsed. */
export function kustomize(dir: string): Manifest[] {
  const result = spawnSync(toolBinary('kustomize'), ['build', dir], { encoding: 'utf8' });
  assert.equal(result.status, 0, `kustomize build ${dir}: ${result.stderr}`);
  return parseManifests(result.stdout);
}

// helm keeps its caches and settings here, not in the user's home
const helmHome = mkdtempSync(join(tmpdir(), 'kubebus-helm-'));

/** helm <args>; its output, after checking it succeeded. */
export function helm(args: readonly string[]): string {
  const result = spawnSync(toolBinary('helm'), args, {
    encoding: 'utf8',
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_DATA_HOME: join(helmHome, 'data'),
    },
  });
  assert.equal(result.status, 0, `helm ${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** Server-side apply with strict field validation; a dry run unless `real`. */
export async function apply(bed: TestBed, manifest: Manifest, real: boolean): Promise<void> {
  const res = await httpCall(
    `${bed.apiserverUrl}${objectUrl(manifest)}?fieldManager=deploy-test&force=true&fieldValidation=Strict${real ? '' : '&dryRun=All'}`,
    {
      method: 'PATCH',
      body: JSON.stringify(manifest),
      contentType: 'application/apply-patch+yaml',
      tls: bed.adminTls,
    },
  );
  assert.ok(
    res.status === 200 || res.status === 201,
    `${manifest.kind} ${manifest.metadata.namespace ?? ''}/${manifest.metadata.name}: ${res.status} ${res.body}`,
  );
}

/** Namespaces, CRDs and RBAC are applied for real (later tests use them); the rest dry run. */
export const appliedForReal = (manifest: Manifest) =>
  [
    'Namespace',
    'CustomResourceDefinition',
    'ServiceAccount',
    'ClusterRole',
    'ClusterRoleBinding',
    'Role',
    'RoleBinding',
  ].includes(manifest.kind);

export async function applyAll(bed: TestBed, manifests: readonly Manifest[]): Promise<void> {
  // namespaces and CRDs first, as kubectl and helm order them
  const first = (m: Manifest) =>
    ['Namespace', 'CustomResourceDefinition'].includes(m.kind) ? 0 : 1;
  for (const manifest of [...manifests].sort((a, b) => first(a) - first(b)))
    await apply(bed, manifest, appliedForReal(manifest));
}
