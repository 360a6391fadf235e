// What deploy/ ships is checked against the real servers: deploy/kubernetes/base
// and deploy/helm are exactly what `kubebus generate` writes; the kustomize
// overlays, deploy/knative and the Helm chart (helm lint, helm template) render
// objects the apiserver accepts with strict field validation, the Prometheus
// Operator's own CRDs included; each role's generated RBAC grants what it
// needs and nothing it must not have, proven by the example converging under
// the ServiceAccount tokens of both renders; nats-server accepts the NATS
// configurations, and the example runs under the generated NATS users. A
// third operator (examples/staticsite) goes through the same generate,
// render and apply.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { crdFiles } from '../bed/tools.js';
import { httpCall } from '../bed/http.js';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, STATUS_PARTITIONS, installDatabaseClusterCrd } from '../support/pipeline.js';
import { DATABASE_CLUSTER_OPERATOR } from '../support/services.js';
import { testNatsConfig } from './nats-config-check.js';
import { waitFor } from '../support/wait.js';
import {
  apply,
  applyAll,
  file,
  helm,
  kustomize,
  parseManifests,
  type Manifest,
} from './deploy-render.js';

const ROLES = ['watcher', 'reconciler', 'status-writer'] as const;
const OPERATOR = 'databasecluster';
const objectName = (role: string) => `kubebus-${OPERATOR}-${role}`;
const IMAGE = 'ghcr.io/kubebus/kubebus:0.1.0';
const MODULE = 'dist/operators/databasecluster.js';
const CHART = file('deploy/helm/databasecluster');
const DERIVED = ['KUBEBUS_CONTROLLERS', 'KUBEBUS_CONTROLLER', 'KUBEBUS_WORK_PARTITIONS'];
// the dev overlay's passwords and NATS certificate are made per checkout, never in git
spawnSync('bash', [file('deploy/kubernetes/overlays/dev/make-secrets.sh')], { stdio: 'ignore' });

interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  securityContext?: Record<string, unknown>;
}
const podSpecOf = (manifest: Manifest) =>
  (
    manifest as unknown as {
      spec?: { template?: { spec?: { containers?: Container[]; securityContext?: object } } };
    }
  ).spec?.template?.spec;
const containersOf = (manifest: Manifest): Container[] => podSpecOf(manifest)?.containers ?? [];
const find = (manifests: Manifest[], kind: string, name: string) => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  assert.ok(found, `no ${kind} ${name}`);
  return found as Manifest & { spec: Record<string, unknown> };
};

/** Every file under `dir`, by relative path. */
function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

/** The roles of a render run `kubebus run <module> --role <role>`, restricted, with nothing derived set. */
function checkRoles(manifests: Manifest[], namespace: string): void {
  for (const role of ROLES) {
    const deployment = find(manifests, 'Deployment', objectName(role));
    assert.equal(deployment.metadata.namespace, namespace);
    const [container] = containersOf(deployment);
    assert.deepEqual(container?.args, ['run', MODULE, '--role', role]);
    assert.equal(container?.image, IMAGE);
    const env = new Map((container?.env ?? []).map((e) => [e.name, e]));
    for (const derived of DERIVED) assert.equal(env.has(derived), false, `${role} sets ${derived}`);
    assert.equal(env.get('KUBEBUS_NATS_USER')?.value, `${OPERATOR}-${role}`);
    assert.equal(env.get('KUBEBUS_NATS_PASSWORD')?.valueFrom?.secretKeyRef?.name, 'kubebus-nats');
    assert.equal(container?.securityContext?.['readOnlyRootFilesystem'], true);
    // /metrics over HTTPS behind TokenReview + SubjectAccessReview, never on the probes' port
    assert.equal(env.get('KUBEBUS_METRICS_AUTH')?.value, 'kubernetes', role);
    assert.equal(env.get('KUBEBUS_METRICS_PORT')?.value, '8443', role);
    assert.deepEqual(podSpecOf(deployment)?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    find(manifests, 'PodDisruptionBudget', objectName(role));
  }
  find(manifests, 'NetworkPolicy', `kubebus-${OPERATOR}`);
}

describe('deploy/ is what kubebus generate writes', () => {
  it('has deploy/kubernetes/base and deploy/helm/databasecluster exactly as generated (npm run generate:deploy)', () => {
    const out = mkdtempSync(join(tmpdir(), 'kubebus-generate-'));
    const result = spawnSync('bash', [file('deploy/scripts/generate-deploy.sh'), out], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    for (const [generated, shipped] of [
      [join(out, 'base'), file('deploy/kubernetes/base')],
      [join(out, 'helm'), CHART],
    ] as const) {
      const want = tree(generated);
      const have = tree(shipped);
      assert.deepEqual(
        [...have.keys()].sort(),
        [...want.keys()].sort(),
        `${shipped}: files differ; run npm run generate:deploy`,
      );
      const stale = [...want].filter(([path, text]) => have.get(path) !== text);
      assert.deepEqual(
        stale.map(([path]) => path),
        [],
        `${shipped}: stale files; run npm run generate:deploy`,
      );
    }
  });
});

describe('deploy/', { timeout: 300_000 }, () => {
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start();
    await installDatabaseClusterCrd(bed);
  });
  after(async () => {
    await bed.stop();
  });

  /** The Prometheus Operator's own CRDs, so PodMonitor and PrometheusRule are validated for real. */
  const installPrometheusOperatorCrds = async () => {
    for (const crd of crdFiles('prometheus-operator').flatMap((path) =>
      parseManifests(readFileSync(path, 'utf8')),
    ))
      await apply(bed, crd, true);
    await waitFor(async () => {
      const res = await httpCall(`${bed.apiserverUrl}/apis/monitoring.coreos.com/v1`, {
        tls: bed.adminTls,
      });
      return (
        res.status === 200 &&
        res.body.includes('"podmonitors"') &&
        res.body.includes('"prometheusrules"')
      );
    }, "the Prometheus Operator's resources to be served");
  };

  for (const overlay of ['dev', 'ha'] as const) {
    it(`renders overlays/${overlay} with kustomize, and the apiserver accepts every object`, async () => {
      const manifests = kustomize(file(`deploy/kubernetes/overlays/${overlay}`));
      await applyAll(bed, manifests);
      checkRoles(manifests, 'kubebus-system');
      const images = new Set(manifests.flatMap(containersOf).map((c) => c.image));
      // the roles, NATS, and the reloader that makes NATS reread renewed certificates
      assert.deepEqual([...images].sort(), [
        IMAGE,
        'nats:2.12-alpine',
        'natsio/nats-server-config-reloader:0.23.0',
      ]);
      // every password the NATS configuration refers to reaches the NATS container,
      // from a key of the Secret the example file documents
      const conf = readFileSync(file('deploy/kubernetes/base/nats/nats-server.conf'), 'utf8');
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
      const topology = containersOf(find(manifests, 'Job', `kubebus-${OPERATOR}-topology`))[0];
      assert.deepEqual(topology?.args, [
        'topology',
        'apply',
        MODULE,
        '--replicas',
        String(replicas),
      ]);
      assert.equal(
        topology?.env?.find((e) => e.name === 'KUBEBUS_NATS_USER')?.value,
        'admin',
        'the topology step runs as the NATS admin user',
      );
      for (const role of ROLES) {
        const env = containersOf(find(manifests, 'Deployment', objectName(role)))[0]?.env ?? [];
        const streamReplicas = env.find((e) => e.name === 'KUBEBUS_STREAM_REPLICAS')?.value;
        assert.equal(streamReplicas, String(replicas), role);
      }
      if (overlay === 'ha') {
        assert.equal(find(manifests, 'Deployment', objectName('reconciler')).spec['replicas'], 3);
        // routes over TLS with the route password, which reaches them from the Secret only
        const routes = nats?.env?.find((e) => e.name === 'KUBEBUS_NATS_ROUTES')?.value ?? '';
        assert.match(
          routes,
          /"nats-route:\/\/route:\$\(KUBEBUS_ROUTE_PASSWORD\)@nats-0\.nats-headless:6222"/,
        );
        assert.equal(natsEnv.get('KUBEBUS_ROUTE_PASSWORD')?.name, 'kubebus-nats');
        find(manifests, 'PodDisruptionBudget', 'nats');
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
        // /metrics' certificate: what every role mounts is signed by the CA in the same
        // Secret and valid for the name the PodMonitor verifies
        const metricsTls = find(
          manifests,
          'Secret',
          `kubebus-${OPERATOR}-metrics-tls`,
        ) as unknown as {
          data: Record<string, string>;
        };
        const pem = (key: string) =>
          new X509Certificate(Buffer.from(metricsTls.data[key] ?? '', 'base64'));
        const endpoint = (
          find(
            kustomize(file('deploy/kubernetes/base/monitoring')),
            'PodMonitor',
            `kubebus-${OPERATOR}`,
          ).spec as { podMetricsEndpoints: { tlsConfig: { serverName?: string } }[] }
        ).podMetricsEndpoints[0];
        const serverName = endpoint?.tlsConfig.serverName ?? '';
        assert.equal(pem('tls.crt').checkHost(serverName), serverName);
        assert.ok(pem('tls.crt').verify(pem('ca.crt').publicKey), 'signed by the Secret ca.crt');
        for (const role of ROLES) {
          const volumes = (
            podSpecOf(find(manifests, 'Deployment', objectName(role))) as
              | {
                  volumes?: { secret?: { secretName?: string } }[];
                }
              | undefined
          )?.volumes;
          assert.ok(
            volumes?.some((v) => v.secret?.secretName === `kubebus-${OPERATOR}-metrics-tls`),
            `${role} mounts /metrics' certificate`,
          );
        }
        for (const role of ROLES)
          assert.equal(find(manifests, 'Deployment', objectName(role)).spec['replicas'], 1);
      }
    });
  }

  it("renders the base's monitoring, which the Prometheus Operator's CRDs accept", async () => {
    await installPrometheusOperatorCrds();
    const manifests = kustomize(file('deploy/kubernetes/base/monitoring'));
    // the scraper's account, its token and its binding to the metrics-reader role (HTTPS /metrics)
    assert.deepEqual(manifests.map((m) => m.kind).sort(), [
      'ClusterRoleBinding',
      'PodMonitor',
      'PrometheusRule',
      'Secret',
      'ServiceAccount',
    ]);
    for (const manifest of manifests) {
      // what kube-prometheus-stack's Prometheus selects on by default
      assert.equal(manifest.metadata.labels?.['release'], 'kube-prometheus-stack');
      await apply(bed, manifest, false);
    }
  });

  it('lints the Helm chart and renders it with helm template; the apiserver accepts every object', async () => {
    const lint = helm(['lint', CHART, '--strict', '--set', 'monitoring.enable=true']);
    assert.match(lint, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    await installPrometheusOperatorCrds();
    const namespace = 'kubebus-helm';
    await apply(bed, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, true);
    const manifests = parseManifests(
      helm([
        'template',
        'databasecluster',
        CHART,
        '--namespace',
        namespace,
        '--set',
        'monitoring.enable=true',
      ]),
    );
    await applyAll(bed, manifests);
    checkRoles(manifests, namespace);
    // the topology step is a hook, so an upgrade runs it again with no manual Job deletion
    const job = find(manifests, 'Job', `kubebus-${OPERATOR}-topology`);
    assert.equal(job.metadata.annotations?.['helm.sh/hook'], 'pre-install,pre-upgrade');
    assert.equal(
      job.metadata.annotations?.['helm.sh/hook-delete-policy'],
      'before-hook-creation,hook-succeeded',
    );
    assert.equal(
      find(manifests, 'PodMonitor', `kubebus-${OPERATOR}`).metadata.labels?.['release'],
      'kube-prometheus-stack',
    );
    const rules = find(manifests, 'PrometheusRule', `kubebus-${OPERATOR}`).spec as {
      groups: { rules: { expr: string; annotations: Record<string, string> }[] }[];
    };
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      assert.match(rule.expr, /namespace="kubebus-helm"/);
      assert.match(rule.annotations['runbook_url'] ?? '', /docs\/deploy\.md#/);
      assert.doesNotMatch(rule.annotations['description'] ?? '', /"\{\{"/);
    }
    // values reach the objects
    const renderedWith = (...values: string[]) =>
      parseManifests(helm(['template', 'x', CHART, '--namespace', namespace, ...values]));
    const scaled = renderedWith('--set', 'reconciler.replicas=5');
    assert.equal(find(scaled, 'Deployment', objectName('reconciler')).spec['replicas'], 5);
    // a role's own variables (the operator's settings) after kubebus', and the egress its
    // outside calls need
    const configured = renderedWith(
      '--set',
      'reconciler.env[0].name=REGISTRY_URL,reconciler.env[0].value=http://registry:8080',
      '--set',
      'networkPolicy.extraEgress[0].ports[0].port=8080',
    );
    const env = containersOf(find(configured, 'Deployment', objectName('reconciler')))[0]?.env;
    assert.deepEqual(env?.at(-1), { name: 'REGISTRY_URL', value: 'http://registry:8080' });
    assert.ok(
      env?.some((variable) => variable.name === 'KUBEBUS_NATS_URL'),
      'kubebus’ own kept',
    );
    const policy = find(configured, 'NetworkPolicy', `kubebus-${OPERATOR}`).spec as {
      egress: unknown[];
    };
    assert.deepEqual(policy.egress.at(-1), { ports: [{ port: 8080 }] });
    // nats.storage sizes the streams in the topology step (a comma is escaped for --set)
    const sized = renderedWith('--set-string', 'nats.storage=events=4GiB\\,performed=128MiB');
    assert.ok(
      containersOf(find(sized, 'Job', `kubebus-${OPERATOR}-topology`))[0]?.args?.includes(
        '--storage=events=4GiB,performed=128MiB',
      ),
    );
    // image.digest pins the image (what a release sets; check-pinned-images.ts --release)
    const digest = `sha256:${'0'.repeat(64)}`;
    const pinned = renderedWith('--set', `image.digest=${digest}`);
    for (const role of ROLES)
      assert.equal(
        containersOf(find(pinned, 'Deployment', objectName(role)))[0]?.image,
        `${IMAGE.replace(/:[^:/]+$/, '')}@${digest}`,
      );
  });

  it('generates, renders and applies a third operator (examples/staticsite) both ways', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kubebus-staticsite-'));
    const generate = spawnSync(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        file('packages/kubebus/src/cli/main.ts'),
        'generate',
        file('examples/staticsite/operator.ts'),
        '--out',
        out,
        '--namespace',
        'staticsite',
        '--image',
        'example/staticsite:1',
        '--module',
        'operator.js',
      ],
      { encoding: 'utf8', cwd: file('.') },
    );
    assert.equal(generate.status, 0, generate.stderr);
    const kustomized = kustomize(join(out, 'kustomize'));
    await applyAll(bed, kustomized);
    const chart = readdirSync(join(out, 'helm'))[0] ?? '';
    helm(['lint', join(out, 'helm', chart), '--strict']);
    const templated = parseManifests(
      helm(['template', chart, join(out, 'helm', chart), '--namespace', 'staticsite']),
    );
    await applyAll(bed, templated);
    const kinds = (manifests: Manifest[]) => manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    // the chart has the base's objects but NATS and the Namespace (installed before the chart)
    const notInChart = new Set(['Namespace', 'StatefulSet', 'Service', 'ConfigMap']);
    assert.deepEqual(
      kinds(templated).sort(),
      kinds(kustomized)
        .filter((k) => !notInChart.has(k.split('/')[0] ?? '') && !k.endsWith('/nats'))
        .sort(),
    );
  });

  it("renders deploy/knative, which Knative's own CRDs accept", async () => {
    // Knative's CRDs as its release ships them: the schemas the manifests must pass
    for (const crd of crdFiles('knative').flatMap((path) =>
      parseManifests(readFileSync(path, 'utf8')),
    ))
      await apply(bed, crd, true);
    await waitFor(async () => {
      const res = await httpCall(`${bed.apiserverUrl}/apis/sources.knative.dev/v1`, {
        tls: bed.adminTls,
      });
      return res.status === 200 && res.body.includes('apiserversources');
    }, "Knative's resources to be served");
    const manifests = kustomize(file('deploy/knative'));
    await applyAll(bed, manifests);
    // no watcher and no stream-consuming reconciler; the status writer stays
    const deployments = manifests
      .filter((m) => m.kind === 'Deployment')
      .map((m) => m.metadata.name);
    assert.deepEqual(deployments, [objectName('status-writer')]);
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
    })[];
    assert.ok(container?.readinessProbe && container.livenessProbe && container.resources);
    assert.equal(container.securityContext?.['runAsNonRoot'], true);
    // the base's image, and `kubebus run --role reconciler` as an HTTP sink
    assert.equal(container.image, IMAGE);
    assert.deepEqual(container.args, ['run', MODULE, '--role', 'reconciler']);
    const env = new Map((container.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.get('KUBEBUS_CONSUME'), 'false');
    assert.equal(env.get('KUBEBUS_HTTP_PORT'), '8081');
    assert.equal(env.get('KUBEBUS_NATS_USER'), `${OPERATOR}-reconciler`);
    // from the Trigger's identity only: its namespace's and name's
    const senders = (env.get('KUBEBUS_HTTP_OIDC_SUBJECTS') ?? '').split(',');
    assert.ok(senders.length > 0);
    for (const sender of senders)
      assert.match(sender, /^system:serviceaccount:kubebus-system:.*kubebus-reconciler/);
    for (const derived of DERIVED) assert.equal(env.has(derived), false, derived);
    // TLS to NATS like every other role: the URL says so and the CA (only ca.crt) is mounted
    assert.match(env.get('KUBEBUS_NATS_URL') ?? '', /^tls:\/\//);
    assert.equal(env.get('KUBEBUS_NATS_CA'), '/etc/kubebus/nats-ca/ca.crt');
    const pod = podSpecOf(service) as { volumes?: unknown } | undefined;
    assert.deepEqual(pod?.volumes, [
      {
        name: 'nats-ca',
        secret: { secretName: 'nats-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
      },
    ]);
  });

  it('grants each role what it needs and not what it must not have', async () => {
    // the kustomize render's RBAC (the Helm render's bindings name other accounts)
    await applyAll(bed, kustomize(file('deploy/kubernetes/overlays/dev')));
    const can = async (
      role: string,
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
              user: `system:serviceaccount:kubebus-system:${objectName(role)}`,
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
      ['watcher', 'list', '', 'secrets', '', true],
      ['watcher', 'get', db, 'databaseclusters', '', false],
      ['watcher', 'patch', db, 'databaseclusters', '', false],
      ['watcher', 'create', '', 'configmaps', '', false],
      ['reconciler', 'patch', 'apps', 'statefulsets', '', true],
      ['reconciler', 'create', '', 'secrets', '', true],
      ['reconciler', 'get', '', 'secrets', '', false],
      ['reconciler', 'list', '', 'secrets', '', false],
      ['reconciler', 'create', 'events.k8s.io', 'events', '', true],
      ['reconciler', 'patch', db, 'databaseclusters', '', true],
      ['reconciler', 'patch', db, 'databaseclusters', 'status', false],
      ['reconciler', 'delete', db, 'databaseclusters', '', false],
      // what it owns it may delete (ctx.delete, pruning); never its primary, never other kinds
      ['reconciler', 'delete', 'apps', 'statefulsets', '', true],
      ['reconciler', 'delete', 'apps', 'deployments', '', false],
      ['reconciler', 'delete', '', 'pods', '', false],
      ['status-writer', 'patch', db, 'databaseclusters', 'status', true],
      ['status-writer', 'patch', db, 'databaseclusters', '', false],
      ['status-writer', 'create', 'apps', 'statefulsets', '', false],
      // each role reviews who reads its /metrics (TokenReview, SubjectAccessReview)
      ['watcher', 'create', 'authentication.k8s.io', 'tokenreviews', '', true],
      ['status-writer', 'create', 'authorization.k8s.io', 'subjectaccessreviews', '', true],
    ];
    for (const [role, verb, group, resource, subresource, allowed] of expectations) {
      assert.equal(
        await can(role, verb, group, resource, subresource),
        allowed,
        `${role} ${allowed ? 'must' : 'must not'} ${verb} ${resource}${subresource ? `/${subresource}` : ''}`,
      );
    }
  });

  /** The example reconciles a cluster with each role under its own ServiceAccount's token. */
  const convergesUnder = async (namespace: string, target: string) => {
    const token = (role: string) => bed.serviceAccountKubeconfig(namespace, objectName(role));
    const pipeline = new Pipeline(bed);
    try {
      await pipeline.watcher({ KUBECONFIG: await token('watcher') });
      await pipeline.reconciler({ KUBECONFIG: await token('reconciler') });
      await pipeline.statusWriter({ KUBECONFIG: await token('status-writer') });
      const custom = bed.kubeConfig().makeApiClient(CustomObjectsApi);
      await bed
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name: target } } });
      const where = {
        group: 'example.kubebus.dev',
        version: 'v1alpha1',
        plural: 'databaseclusters',
        namespace: target,
      };
      await custom.createNamespacedCustomObject({
        ...where,
        body: {
          apiVersion: 'example.kubebus.dev/v1alpha1',
          kind: 'DatabaseCluster',
          metadata: { name: 'orders' },
          spec: { engine: 'postgres', version: '16', storage: { size: '1Gi' } },
        },
      });
      await waitFor(async () => {
        const cluster = (await custom.getNamespacedCustomObject({ ...where, name: 'orders' })) as {
          metadata: { generation: number; finalizers?: string[] };
          status?: { observedGeneration?: number };
        };
        return (
          cluster.status?.observedGeneration === cluster.metadata.generation &&
          (cluster.metadata.finalizers ?? []).length > 0
        );
      }, `the cluster reconciled and its status written, under the RBAC of ${namespace}`);
      const set = await bed
        .kubeConfig()
        .makeApiClient(AppsV1Api)
        .readNamespacedStatefulSet({ name: 'orders', namespace: target });
      assert.equal(set.metadata?.ownerReferences?.[0]?.name, 'orders');
    } finally {
      await pipeline.stop();
    }
  };

  it('runs the example to its status under the kustomize render’s ServiceAccount tokens', async () => {
    // the RBAC is what the overlays applied for real
    await applyAll(bed, kustomize(file('deploy/kubernetes/overlays/dev')));
    await convergesUnder('kubebus-system', 'least');
  });

  it('runs the example to its status under the Helm render’s ServiceAccount tokens', async () => {
    // the chart's RBAC, applied for real: its ClusterRoleBindings now name kubebus-helm's accounts
    const namespace = 'kubebus-helm';
    await apply(bed, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, true);
    await applyAll(
      bed,
      parseManifests(helm(['template', 'databasecluster', CHART, '--namespace', namespace])),
    );
    await convergesUnder(namespace, 'least-helm');
  });

  it('alerts and charts only series the running roles export', async () => {
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

      const rules = kustomize(file('deploy/kubernetes/base/monitoring')).find(
        (m) => m.kind === 'PrometheusRule',
      ) as unknown as {
        spec: {
          groups: {
            rules: {
              alert: string;
              expr: string;
              labels?: { severity?: string };
              annotations?: { summary?: string; description?: string };
            }[];
          }[];
        };
      };
      const alerts = rules.spec.groups.flatMap((group) => group.rules);
      assert.ok(alerts.length >= 5);
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
      assert.deepEqual(missing, [], `queried but exported by no role: ${missing.join(', ')}`);
      // each alert's runbook is a section of docs/deploy.md
      const runbooks = readFileSync(file('docs/deploy.md'), 'utf8');
      for (const alert of alerts)
        assert.ok(
          runbooks.includes(`### ${alert.alert}`),
          `docs/deploy.md has no runbook for ${alert.alert}`,
        );
    } finally {
      await pipeline.stop();
    }
  });

  it('has NATS configurations nats-server accepts: the generated one and the local stack’s', async () => {
    const check = async (conf: string, passwords: readonly string[], clusterConf?: string) => {
      const routes = {
        KUBEBUS_NATS_ROUTES: '["nats-route://route:p@nats-0.nats-headless:6222"]',
        KUBEBUS_ROUTE_ADVERTISE: 'nats-0.nats-headless:6222',
      };
      const env = {
        ...routes,
        ...Object.fromEntries(passwords.map((variable) => [variable, 'p'])),
      };
      const result = await testNatsConfig(conf, env, clusterConf);
      assert.equal(result.status, 0, result.stderr + result.stdout);
    };
    const generated = file('deploy/kubernetes/base/nats/nats-server.conf');
    const variables = [
      ...new Set(
        [...readFileSync(generated, 'utf8').matchAll(/\$(KUBEBUS_[A-Z_]+_PASSWORD)/g)].map(
          (m) => m[1] ?? '',
        ),
      ),
    ];
    // admin, three roles, cli, dlq-admin, and the example's state account user (ADR 0015)
    assert.equal(variables.length, 7);
    await check(generated, variables);
    // the ha overlay's cluster: route TLS and route authorization
    await check(
      generated,
      [...variables, 'KUBEBUS_ROUTE_PASSWORD'],
      file('deploy/kubernetes/overlays/ha/cluster.conf'),
    );
    await check(file('deploy/nats/nats-server.conf'), [
      'KUBEBUS_WATCHER_PASSWORD',
      'KUBEBUS_RECONCILER_PASSWORD',
      'KUBEBUS_STATUS_WRITER_PASSWORD',
      'KUBEBUS_CLI_PASSWORD',
      'KUBEBUS_ADMIN_PASSWORD',
      'KUBEBUS_DLQ_ADMIN_PASSWORD',
      'KUBEBUS_RECONCILER_STATE_PASSWORD',
    ]);
  });
});

describe('the generated NATS users', { timeout: 300_000 }, () => {
  // the accounts of the generated configuration, on the test bed's nats-server
  const conf = readFileSync(file('deploy/kubernetes/base/nats/nats-server.conf'), 'utf8');
  const password = (user: string) => `${user}-secret`;
  const users = [
    'admin',
    ...ROLES.map((role) => `${OPERATOR}-${role}`),
    'cli',
    'dlq-admin',
    `${OPERATOR}-state`,
  ];
  const env = Object.fromEntries(
    users.map((user) => [
      `KUBEBUS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`,
      password(user),
    ]),
  );
  let bed: TestBed;
  before(async () => {
    bed = await TestBed.start({
      nats: { extraConfig: conf.slice(conf.indexOf('accounts {')), env },
    });
    await installDatabaseClusterCrd(bed);
  });
  after(async () => {
    await bed.stop();
  });

  it('run the example to its status, its backup bucket included, after the topology step as admin', async () => {
    const topology = spawnSync(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        file('packages/kubebus/src/cli/main.ts'),
        'topology',
        'apply',
        DATABASE_CLUSTER_OPERATOR,
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          KUBEBUS_NATS_URL: bed.natsUrl,
          KUBEBUS_NATS_USER: 'admin',
          KUBEBUS_NATS_PASSWORD: password('admin'),
          // the settings the pipeline's roles run with: their consumers are made with them
          KUBEBUS_STATUS_PARTITIONS: STATUS_PARTITIONS,
          KUBEBUS_ACK_WAIT: '5s',
        },
        timeout: 60_000,
      },
    );
    assert.equal(topology.status, 0, topology.stderr);
    const as = (role: string) => ({
      KUBEBUS_NATS_USER: `${OPERATOR}-${role}`,
      KUBEBUS_NATS_PASSWORD: password(`${OPERATOR}-${role}`),
    });
    const pipeline = new Pipeline(bed);
    try {
      await pipeline.watcher(as('watcher'));
      await pipeline.reconciler({
        ...as('reconciler'),
        KUBEBUS_STATE_NATS_USER: `${OPERATOR}-state`,
        KUBEBUS_STATE_NATS_PASSWORD: password(`${OPERATOR}-state`),
      });
      await pipeline.statusWriter(as('status-writer'));
      const custom = bed.kubeConfig().makeApiClient(CustomObjectsApi);
      await bed
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name: 'users' } } });
      const where = {
        group: 'example.kubebus.dev',
        version: 'v1alpha1',
        plural: 'databaseclusters',
        namespace: 'users',
      };
      await custom.createNamespacedCustomObject({
        ...where,
        body: {
          apiVersion: 'example.kubebus.dev/v1alpha1',
          kind: 'DatabaseCluster',
          metadata: { name: 'orders' },
          spec: { engine: 'postgres', version: '16', storage: { size: '1Gi' } },
        },
      });
      await waitFor(async () => {
        const cluster = (await custom.getNamespacedCustomObject({ ...where, name: 'orders' })) as {
          metadata: { generation: number };
          status?: { observedGeneration?: number };
        };
        return cluster.status?.observedGeneration === cluster.metadata.generation;
      }, 'the cluster reconciled and its status written, each role as its generated NATS user');
      // the bucket the example keeps backups in: in the operator's own state account
      const nc = await connect({
        servers: bed.natsUrl,
        user: `${OPERATOR}-state`,
        pass: password(`${OPERATOR}-state`),
      });
      try {
        const names: string[] = [];
        for await (const name of (await jetstreamManager(nc)).streams.names()) names.push(name);
        assert.ok(
          names.some((name) => name.startsWith('OBJ_kubebus-backups-')),
          names.join(),
        );
      } finally {
        await nc.close();
      }
    } finally {
      await pipeline.stop();
    }
  });
});
