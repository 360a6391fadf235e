// What deploy/ ships is checked against the real servers: the Kubernetes
// manifests pass the apiserver's validation, each service's RBAC grants what
// it needs and nothing it must not have, and nats-server accepts the NATS
// configuration with its per-service users.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { knativeCrdFiles, serverBinary, toolBinary } from '../bed/binaries.js';
import { waitFor } from '../support/wait.js';
import { httpCall } from '../bed/http.js';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';

const file = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

const plural: Record<string, string> = {
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  Service: 'services',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Job: 'jobs',
  PodDisruptionBudget: 'poddisruptionbudgets',
  CustomResourceDefinition: 'customresourcedefinitions',
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
  const resource = plural[manifest.kind];
  if (resource === undefined) throw new Error(`no path for ${manifest.kind}`);
  return `${base}${scope}/${resource}/${manifest.metadata.name}`;
}

const OVERLAYS = ['dev', 'ha'] as const;

/** `kubectl kustomize <dir>`, parsed. */
function kustomize(dir: string): Manifest[] {
  const result = spawnSync(toolBinary('kustomize'), ['build', file(dir)], { encoding: 'utf8' });
  assert.equal(result.status, 0, `kustomize build ${dir}: ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((doc) => doc.toJSON() as Manifest);
}
const render = (overlay: (typeof OVERLAYS)[number]) =>
  kustomize(`deploy/kubernetes/overlays/${overlay}`);
/** Namespaces and RBAC are applied for real (a later test asks about RBAC); the rest dry run. */
const appliedForReal = (manifest: Manifest) =>
  ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(manifest.kind);

interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
}
const containersOf = (manifest: Manifest): Container[] =>
  (manifest as unknown as { spec?: { template?: { spec?: { containers?: Container[] } } } }).spec
    ?.template?.spec?.containers ?? [];
const find = (manifests: Manifest[], kind: string, name: string) => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  assert.ok(found, `no ${kind} ${name}`);
  return found as Manifest & { spec: Record<string, unknown> };
};

describe('deploy/', { timeout: 180_000 }, () => {
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start();
    await installDatabaseClusterCrd(bed);
  });
  after(async () => {
    await bed.stop();
  });

  /** Server-side apply; a dry run unless `real`. */
  const apply = (manifest: Manifest, real: boolean) =>
    httpCall(
      `${bed.apiserverUrl}${objectUrl(manifest)}?fieldManager=deploy-test&force=true&fieldValidation=Strict${real ? '' : '&dryRun=All'}`,
      {
        method: 'PATCH',
        body: JSON.stringify(manifest),
        contentType: 'application/apply-patch+yaml',
        tls: bed.adminTls,
      },
    );

  for (const overlay of OVERLAYS) {
    it(`renders overlays/${overlay} with kustomize, and the apiserver accepts every object`, async () => {
      const manifests = render(overlay);
      for (const manifest of manifests) {
        const res = await apply(manifest, appliedForReal(manifest));
        assert.ok(
          res.status === 200 || res.status === 201,
          `${overlay}: ${manifest.kind} ${manifest.metadata.name}: ${res.status} ${res.body}`,
        );
      }
      // the image is set once: every kubebus container runs the same, resolved image
      const images = new Set(
        manifests
          .flatMap(containersOf)
          .filter((c) => c.name !== 'nats')
          .map((c) => c.image),
      );
      assert.deepEqual([...images], ['ghcr.io/kubebus/kubebus:0.1.0']);
      // every password the NATS configuration refers to reaches the NATS container,
      // from a key of the Secret the example file documents
      const conf = readFileSync(file('deploy/nats/nats-server.conf'), 'utf8');
      const variables = new Set(
        [...conf.matchAll(/\$(KUBEBUS_[A-Z_]+_PASSWORD)/g)].map((m) => m[1]),
      );
      const nats = containersOf(find(manifests, 'StatefulSet', 'nats'))[0];
      const natsEnv = new Map((nats?.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef]));
      const documented = new Set(
        [
          ...readFileSync(file('deploy/kubernetes/nats-users.env.example'), 'utf8').matchAll(
            /^([a-z-]+)=$/gm,
          ),
        ].map((m) => m[1]),
      );
      for (const variable of variables) {
        const ref = natsEnv.get(variable as string);
        assert.ok(ref, `${variable} is not set in the NATS container`);
        assert.equal(ref.name, 'kubebus-nats');
        assert.ok(documented.has(ref.key), `key ${ref.key} missing from nats-users.env.example`);
      }
      const replicas = overlay === 'ha' ? 3 : 1;
      assert.equal(find(manifests, 'StatefulSet', 'nats').spec['replicas'], replicas);
      const topology = containersOf(find(manifests, 'Job', 'kubebus-topology'))[0];
      assert.deepEqual(topology?.args, ['topology', 'apply', '--replicas', String(replicas)]);
      assert.equal(
        topology?.env?.find((e) => e.name === 'KUBEBUS_NATS_USER')?.value,
        'admin',
        'the topology step runs as the NATS admin user',
      );
      for (const name of ['kubebus-watcher', 'kubebus-reconciler', 'kubebus-status-writer']) {
        const env = containersOf(find(manifests, 'Deployment', name))[0]?.env ?? [];
        const streamReplicas = env.find((e) => e.name === 'KUBEBUS_STREAM_REPLICAS')?.value;
        assert.equal(streamReplicas ?? '1', String(replicas), name);
        assert.notEqual(env.find((e) => e.name === 'KUBEBUS_NATS_USER')?.value, 'admin', name);
      }
      if (overlay === 'ha') {
        assert.equal(find(manifests, 'Deployment', 'kubebus-reconciler').spec['replicas'], 3);
        assert.match(nats?.args?.join(' ') ?? '', /--routes nats:\/\/nats-0\.nats-headless:6222,/);
        for (const name of [
          'nats',
          'kubebus-watcher',
          'kubebus-reconciler',
          'kubebus-status-writer',
        ])
          find(manifests, 'PodDisruptionBudget', name);
      } else {
        // dev generates the Secret, with every key anything refers to
        const secret = find(manifests, 'Secret', 'kubebus-nats') as unknown as {
          data: Record<string, string>;
        };
        const referenced = manifests
          .flatMap(containersOf)
          .flatMap((c) => c.env ?? [])
          .flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : []));
        for (const key of referenced) assert.ok(key in secret.data, `dev Secret lacks ${key}`);
      }
    });
  }

  it("renders deploy/knative, which Knative's own CRDs accept", async () => {
    // Knative's CRDs as its release ships them: the schemas the manifests must pass
    for (const crd of knativeCrdFiles().flatMap((path) =>
      parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => doc.toJSON() as Manifest),
    )) {
      const res = await apply(crd, true);
      assert.ok(res.status === 200 || res.status === 201, `${crd.metadata.name}: ${res.body}`);
    }
    await waitFor(async () => {
      const res = await httpCall(`${bed.apiserverUrl}/apis/sources.knative.dev/v1`, {
        tls: bed.adminTls,
      });
      return res.status === 200 && res.body.includes('apiserversources');
    }, "Knative's resources to be served");
    const manifests = kustomize('deploy/knative');
    for (const manifest of manifests) {
      const res = await apply(manifest, appliedForReal(manifest));
      assert.ok(
        res.status === 200 || res.status === 201,
        `knative: ${manifest.kind} ${manifest.metadata.name}: ${res.status} ${res.body}`,
      );
    }
    // no watcher and no stream-consuming reconciler; the status writer stays
    const deployments = manifests
      .filter((m) => m.kind === 'Deployment')
      .map((m) => m.metadata.name);
    assert.deepEqual(deployments, ['kubebus-status-writer']);
    const source = find(manifests, 'ApiServerSource', 'kubebus-databaseclusters');
    assert.ok(source.spec['namespaceSelector'], 'the source watches more than its own namespace');
    const kinds = (source.spec['resources'] as { kind: string }[]).map((r) => r.kind);
    assert.ok(kinds.includes('DatabaseCluster') && !kinds.includes('Secret'), kinds.join());
    const delivery = find(manifests, 'Trigger', 'kubebus-reconciler').spec['delivery'] as {
      retry: number;
      backoffPolicy: string;
      deadLetterSink: { uri: string };
    };
    assert.ok(delivery.retry > 0);
    assert.equal(delivery.backoffPolicy, 'exponential');
    assert.equal(delivery.deadLetterSink.uri, '/dead-letters');
    const service = manifests.find(
      (m) => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1',
    );
    assert.ok(service);
    const [container] = containersOf(service) as (Container & {
      readinessProbe?: unknown;
      livenessProbe?: unknown;
      resources?: unknown;
      securityContext?: { runAsNonRoot?: boolean };
    })[];
    assert.ok(container?.readinessProbe && container.livenessProbe && container.resources);
    assert.equal(container.securityContext?.runAsNonRoot, true);
    assert.equal(container.image, 'ghcr.io/kubebus/kubebus:0.1.0');
    assert.equal(container.env?.find((e) => e.name === 'KUBEBUS_CONSUME')?.value, 'false');
  });

  it('grants each service what it needs and not what it must not have', async () => {
    const can = async (
      serviceAccount: string,
      verb: string,
      group: string,
      resource: string,
      subresource = '',
    ) => {
      const review = await httpCall(
        `${bed.apiserverUrl}/apis/authorization.k8s.io/v1/subjectaccessreviews`,
        {
          method: 'POST',
          tls: bed.adminTls,
          body: JSON.stringify({
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: `system:serviceaccount:kubebus-system:kubebus-${serviceAccount}`,
              resourceAttributes: { verb, group, resource, subresource, namespace: 'default' },
            },
          }),
        },
      );
      return (JSON.parse(review.body) as { status: { allowed: boolean } }).status.allowed;
    };
    const db = 'example.kubebus.dev';
    const expectations: [string, string, string, string, string, boolean][] = [
      ['watcher', 'watch', db, 'databaseclusters', '', true],
      ['watcher', 'watch', 'apps', 'statefulsets', '', true],
      ['watcher', 'patch', db, 'databaseclusters', '', false],
      ['watcher', 'create', '', 'configmaps', '', false],
      ['reconciler', 'patch', 'apps', 'statefulsets', '', true],
      ['reconciler', 'create', '', 'secrets', '', true],
      ['reconciler', 'get', '', 'secrets', '', false],
      ['reconciler', 'create', 'events.k8s.io', 'events', '', true],
      ['reconciler', 'patch', db, 'databaseclusters', 'status', false],
      ['reconciler', 'delete', db, 'databaseclusters', '', false],
      ['status-writer', 'patch', db, 'databaseclusters', 'status', true],
      ['status-writer', 'patch', db, 'databaseclusters', '', false],
      ['status-writer', 'create', 'apps', 'statefulsets', '', false],
    ];
    for (const [account, verb, group, resource, subresource, allowed] of expectations) {
      assert.equal(
        await can(account, verb, group, resource, subresource),
        allowed,
        `${account} ${allowed ? 'must' : 'must not'} ${verb} ${resource}${subresource ? `/${subresource}` : ''}`,
      );
    }
  });

  it('runs the example to its status with each service under its own ServiceAccount token', async () => {
    // the RBAC is what the dev render applied for real; the tokens are TokenRequests
    const token = (account: string) =>
      bed.serviceAccountKubeconfig('kubebus-system', `kubebus-${account}`);
    const pipeline = new Pipeline(bed);
    try {
      await pipeline.watcher({ KUBECONFIG: await token('watcher') });
      await pipeline.reconciler({ KUBECONFIG: await token('reconciler') });
      await pipeline.statusWriter({ KUBECONFIG: await token('status-writer') });
      const custom = bed.kubeConfig().makeApiClient(CustomObjectsApi);
      await bed
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name: 'least' } } });
      const target = {
        group: 'example.kubebus.dev',
        version: 'v1alpha1',
        plural: 'databaseclusters',
        namespace: 'least',
      };
      await custom.createNamespacedCustomObject({
        ...target,
        body: {
          apiVersion: 'example.kubebus.dev/v1alpha1',
          kind: 'DatabaseCluster',
          metadata: { name: 'orders' },
          spec: { engine: 'postgres', version: '16', storage: { size: '1Gi' } },
        },
      });
      await waitFor(async () => {
        const cluster = (await custom.getNamespacedCustomObject({ ...target, name: 'orders' })) as {
          metadata: { generation: number; finalizers?: string[] };
          status?: { observedGeneration?: number };
        };
        return (
          cluster.status?.observedGeneration === cluster.metadata.generation &&
          (cluster.metadata.finalizers ?? []).length > 0
        );
      }, 'the cluster reconciled and its status written, under the shipped RBAC');
      const set = await bed
        .kubeConfig()
        .makeApiClient(AppsV1Api)
        .readNamespacedStatefulSet({ name: 'orders', namespace: 'least' });
      assert.equal(set.metadata?.ownerReferences?.[0]?.name, 'orders');
    } finally {
      await pipeline.stop();
    }
  });

  it('alerts and charts only series the running services export', async () => {
    const pipeline = new Pipeline(bed);
    try {
      const services = [
        await pipeline.watcher(),
        await pipeline.reconciler(),
        await pipeline.statusWriter(),
      ];
      const exported = new Set<string>();
      for (const service of services)
        for (const match of (await service.get('/metrics')).body.matchAll(/^# TYPE (\S+) /gm))
          if (match[1] !== undefined) exported.add(match[1]);

      const [podMonitor, rules] = parseAllDocuments(
        readFileSync(file('deploy/kubernetes/monitoring.yaml'), 'utf8'),
      ).map((document) => document.toJSON() as Record<string, unknown>);
      assert.equal(podMonitor?.['kind'], 'PodMonitor');
      assert.equal(rules?.['kind'], 'PrometheusRule');
      const alerts = (
        rules?.['spec'] as {
          groups: {
            rules: {
              alert: string;
              expr: string;
              labels?: { severity?: string };
              annotations?: { summary?: string; description?: string };
            }[];
          }[];
        }
      ).groups.flatMap((group) => group.rules);
      assert.ok(alerts.length >= 5);
      for (const alert of alerts) {
        assert.ok(alert.labels?.severity, `${alert.alert} has no severity`);
        assert.ok(alert.annotations?.summary && alert.annotations.description, alert.alert);
      }
      const dashboard = JSON.parse(
        readFileSync(file('deploy/grafana/kubebus-dashboard.json'), 'utf8'),
      ) as { panels: { targets: { expr: string }[] }[]; templating: { list: { query: string }[] } };
      const queries = [
        ...alerts.map((alert) => alert.expr),
        ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
        ...dashboard.templating.list.map((variable) => variable.query),
      ];
      const queried = new Set(
        queries.flatMap((query) =>
          [
            ...query.matchAll(
              /\b((?:kubebus|controller_runtime|workqueue|rest_client)_[a-z_]+)\b/g,
            ),
          ].map((match) => (match[1] ?? '').replace(/_(bucket|sum|count)$/, '')),
        ),
      );
      assert.ok(queried.size >= 10);
      const missing = [...queried].filter((name) => !exported.has(name));
      assert.deepEqual(missing, [], `queried but exported by no service: ${missing.join(', ')}`);
    } finally {
      await pipeline.stop();
    }
  });

  it('has a NATS configuration nats-server accepts, with one user per service', () => {
    const result = spawnSync(
      serverBinary('nats-server'),
      ['-c', file('deploy/nats/nats-server.conf'), '-t'],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          KUBEBUS_WATCHER_PASSWORD: 'w',
          KUBEBUS_RECONCILER_PASSWORD: 'r',
          KUBEBUS_STATUS_WRITER_PASSWORD: 's',
          KUBEBUS_CLI_PASSWORD: 'c',
          KUBEBUS_ADMIN_PASSWORD: 'a',
          KUBEBUS_DLQ_ADMIN_PASSWORD: 'd',
        },
      },
    );
    assert.equal(result.status, 0, result.stderr + result.stdout);
  });
});
