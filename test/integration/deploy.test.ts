// What deploy/ ships is checked against the real servers: the Kubernetes
// manifests pass the apiserver's validation, each service's RBAC grants what
// it needs and nothing it must not have, and nats-server accepts the NATS
// configuration with its per-service users.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { serverBinary } from '../bed/binaries.js';
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
};

function collection(manifest: Manifest): string {
  const base = manifest.apiVersion.includes('/')
    ? `/apis/${manifest.apiVersion}`
    : `/api/${manifest.apiVersion}`;
  const scope = manifest.metadata.namespace ? `/namespaces/${manifest.metadata.namespace}` : '';
  const resource = plural[manifest.kind];
  if (resource === undefined) throw new Error(`no path for ${manifest.kind}`);
  return `${base}${scope}/${resource}`;
}

describe('deploy/', { timeout: 180_000 }, () => {
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start();
    await installDatabaseClusterCrd(bed);
  });
  after(async () => {
    await bed.stop();
  });

  const post = (manifest: Manifest, dryRun: boolean) =>
    httpCall(`${bed.apiserverUrl}${collection(manifest)}${dryRun ? '?dryRun=All' : ''}`, {
      method: 'POST',
      body: JSON.stringify(manifest),
      tls: bed.adminTls,
    });

  it('has Kubernetes manifests the apiserver accepts', async () => {
    const manifests = ['deploy/kubernetes/rbac.yaml', 'deploy/kubernetes/services.yaml'].flatMap(
      (path) =>
        parseAllDocuments(readFileSync(file(path), 'utf8')).map((doc) => doc.toJSON() as Manifest),
    );
    for (const manifest of manifests) {
      // RBAC is created for real (the next test asks about it); the rest is a server-side dry run.
      const real = manifest.kind !== 'Deployment';
      const res = await post(manifest, !real);
      assert.equal(res.status, 201, `${manifest.kind} ${manifest.metadata.name}: ${res.body}`);
    }
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
    const compose = parse(readFileSync(file('docker-compose.yml'), 'utf8')) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    const config = readFileSync(file('deploy/nats/nats-server.conf'), 'utf8');
    for (const service of ['watcher', 'reconciler', 'status-writer']) {
      assert.equal(compose.services[service]?.environment?.['KUBEBUS_NATS_USER'], service);
      assert.match(config, new RegExp(`user: ${service},`));
    }
  });
});
