import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ROLES } from '../host/role-configs.js';
import { helmChartFiles, splitImage } from './helm-chart.js';
import { site } from './test-operators.js';

describe('helmChartFiles', () => {
  const files = helmChartFiles(site, ROLES, {
    image: 'ghcr.io/me/site:1.2.3',
    module: 'dist/site.js',
    watchNamespaces: [],
  });

  it('has values for the image, replicas and resources per role, NATS and the namespace', () => {
    const values = parse(files['values.yaml'] ?? '') as Record<string, Record<string, unknown>>;
    assert.deepEqual(values['image'], {
      repository: 'ghcr.io/me/site',
      tag: '1.2.3',
      digest: '',
      pullPolicy: 'IfNotPresent',
    });
    assert.equal(values['namespace'], '');
    assert.deepEqual(Object.keys(values['nats'] ?? {}), [
      'url',
      'tls',
      'credentialsSecret',
      'streamReplicas',
      'storage',
    ]);
    for (const key of ['watcher', 'reconciler', 'statusWriter']) {
      assert.equal(typeof values[key]?.['replicas'], 'number', key);
      assert.ok(values[key]?.['resources'], key);
    }
    // every value a template reads is declared
    const templates = Object.entries(files)
      .filter(([path]) => path.startsWith('templates/'))
      .map(([, text]) => text)
      .join('\n');
    for (const [, path] of templates.matchAll(/\.Values\.([\w.]+)/g)) {
      let node: unknown = values;
      for (const part of (path ?? '').split('.'))
        node = (node as Record<string, unknown> | undefined)?.[part];
      assert.notEqual(node, undefined, `.Values.${path ?? ''} is not in values.yaml`);
    }
  });

  it('reaches NATS over TLS by default, with only ca.crt of nats.tls.secret mounted', () => {
    const values = parse(files['values.yaml'] ?? '') as { nats: Record<string, unknown> };
    assert.match(String(values.nats['url']), /^tls:\/\//);
    assert.deepEqual(values.nats['tls'], { secret: 'nats-tls' });
    for (const path of ['templates/deployments.yaml', 'templates/topology-job.yaml']) {
      const text = files[path] ?? '';
      assert.match(text, /secretName: \{\{ \.Values\.nats\.tls\.secret \}\}/, path);
      assert.match(text, /items:\s+- key: ca\.crt\s+path: ca\.crt/, path);
      assert.match(text, /name: KUBEBUS_NATS_CA\s+value: \/etc\/kubebus\/nats-ca\/ca\.crt/, path);
      assert.doesNotMatch(text, /tls\.key/, path);
    }
  });

  it('makes the topology step a hook, deleted before it is created again and once it succeeds', () => {
    const job = files['templates/topology-job.yaml'] ?? '';
    assert.match(job, /helm\.sh\/hook: pre-install,pre-upgrade/);
    assert.match(job, /helm\.sh\/hook-delete-policy: before-hook-creation,hook-succeeded/);
  });

  it('keeps the CRD on uninstall, and monitoring is opt-in', () => {
    assert.match(files['templates/crd.yaml'] ?? '', /^\{\{- if \.Values\.crd\.enable \}\}/);
    assert.match(files['templates/crd.yaml'] ?? '', /helm\.sh\/resource-policy: keep/);
    assert.match(
      files['templates/monitoring.yaml'] ?? '',
      /^\{\{- if \.Values\.monitoring\.enable \}\}/,
    );
  });

  it('splits image references, a digest apart (the chart renders repository@digest)', () => {
    assert.deepEqual(splitImage('localhost:5000/a/b:2'), {
      repository: 'localhost:5000/a/b',
      tag: '2',
      digest: '',
    });
    assert.deepEqual(splitImage('localhost:5000/a/b'), {
      repository: 'localhost:5000/a/b',
      tag: '',
      digest: '',
    });
    assert.deepEqual(splitImage('a/b@sha256:00'), {
      repository: 'a/b',
      tag: '',
      digest: 'sha256:00',
    });
    assert.deepEqual(splitImage('a/b:1@sha256:00'), {
      repository: 'a/b',
      tag: '1',
      digest: 'sha256:00',
    });
  });
});
