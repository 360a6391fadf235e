import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { deploymentsOf } from './deployments.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

interface Container {
  args: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string } } }[];
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  resources: unknown;
}
interface Deployment {
  metadata: { name: string; namespace: string };
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: Record<string, unknown>;
        containers: Container[];
      };
    };
  };
}

const settings = plainSettings({
  namespace: 'ops',
  image: 'example/site:1',
  module: 'dist/site.js',
  watchNamespaces: [],
});

describe('deploymentsOf', () => {
  const deployments = deploymentsOf(site, ROLES, settings) as Deployment[];

  it('runs `kubebus run <module> --role <role>` per role, under its own ServiceAccount and NATS user', () => {
    assert.deepEqual(
      deployments.map((d) => d.metadata.name),
      ['kubebus-site-watcher', 'kubebus-site-reconciler', 'kubebus-site-status-writer'],
    );
    for (const [i, role] of ROLES.entries()) {
      const deployment = deployments[i];
      const container = deployment?.spec.template.spec.containers[0];
      assert.deepEqual(container?.args, ['run', 'dist/site.js', '--role', role]);
      assert.equal(deployment?.spec.template.spec.serviceAccountName, `kubebus-site-${role}`);
      const env = new Map(container?.env.map((e) => [e.name, e]));
      assert.equal(env.get('KUBEBUS_NATS_USER')?.value, `site-${role}`);
      assert.equal(env.get('KUBEBUS_NATS_PASSWORD')?.valueFrom?.secretKeyRef?.key, `site-${role}`);
      // what the definition decides is never set by hand
      for (const derived of [
        'KUBEBUS_CONTROLLERS',
        'KUBEBUS_CONTROLLER',
        'KUBEBUS_WORK_PARTITIONS',
      ])
        assert.equal(env.has(derived), false, derived);
      assert.equal(container?.livenessProbe.httpGet.path, '/healthz');
      assert.equal(container?.readinessProbe.httpGet.path, '/readyz');
      assert.ok(container?.resources);
      // the selector picks the pods it makes
      const labels = deployment?.spec.template.metadata.labels ?? {};
      for (const [key, value] of Object.entries(deployment?.spec.selector.matchLabels ?? {}))
        assert.equal(labels[key], value);
    }
  });

  it('meets the restricted Pod Security Standard with a numeric uid', () => {
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      assert.equal(pod.securityContext['runAsNonRoot'], true);
      assert.equal(pod.securityContext['runAsUser'], 1000);
      assert.deepEqual(pod.securityContext['seccompProfile'], { type: 'RuntimeDefault' });
      const container = pod.containers[0]?.securityContext ?? {};
      assert.equal(container['allowPrivilegeEscalation'], false);
      assert.equal(container['readOnlyRootFilesystem'], true);
      assert.deepEqual(container['capabilities'], { drop: ['ALL'] });
    }
  });

  it('tells the watcher and the reconciler (its upgrade sweep) the namespaces when RBAC is per namespace', () => {
    const deployments = deploymentsOf(site, ['watcher', 'reconciler', 'status-writer'], {
      ...settings,
      watchNamespaces: ['a', 'b'],
    }) as Deployment[];
    const namespacesOf = (deployment: Deployment | undefined) =>
      (deployment?.spec.template.spec.containers[0]?.env ?? []).find(
        (e) => e.name === 'KUBEBUS_WATCH_NAMESPACES',
      )?.value;
    const [watcher, reconciler, writer] = deployments;
    assert.equal(namespacesOf(watcher), 'a,b');
    assert.equal(namespacesOf(reconciler), 'a,b');
    assert.equal(namespacesOf(writer), undefined, 'the status writer lists nothing');
  });
});
