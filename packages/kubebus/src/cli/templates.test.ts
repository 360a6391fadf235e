// What `kubebus init` writes: an image whose entrypoint is the binary the
// generated Deployments pass `run <module> --role <role>` to, a README whose
// commands are the CLI's, a test script that type-checks, --group/--kind,
// --scope Cluster.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { projectFiles } from './templates.js';

describe('kubebus init templates', () => {
  const files = projectFiles('my-operator');

  it('writes an image the generated Deployments can pass their args to', () => {
    assert.match(
      files['Dockerfile'] ?? '',
      /^ENTRYPOINT \["node", "node_modules\/kubebus\/dist\/cli\.js"\]$/m,
    );
    assert.match(files['Dockerfile'] ?? '', /^CMD \["run", "operator\.ts"\]$/m);
  });

  it('documents the generate command as the CLI takes it, and type-checks in npm test', () => {
    assert.match(files['README.md'] ?? '', /kubebus generate operator\.ts --out deploy/);
    const manifest = JSON.parse(files['package.json'] ?? '') as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    assert.equal(manifest.scripts['generate'], 'kubebus generate operator.ts --out deploy');
    assert.match(manifest.scripts['test'] ?? '', /^tsc --noEmit && /);
    assert.ok(manifest.devDependencies['typescript']);
    assert.ok(files['tsconfig.json']);
  });

  it('asks for the Node floor kubebus itself has, and builds the image on a Node above it', () => {
    const manifest = JSON.parse(files['package.json'] ?? '') as {
      engines: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const floor = (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        engines: Record<string, string>;
      }
    ).engines['node'];
    assert.equal(manifest.engines['node'], floor);
    const [major] = /\d+/.exec(floor ?? '') ?? [];
    assert.match(manifest.devDependencies['@types/node'] ?? '', new RegExp(`^\\^${major}\\.`));
    const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(files['Dockerfile'] ?? '')?.[1];
    assert.ok(Number(image) >= Number(major), `the image's Node ${image} is below the floor`);
  });

  it('renames the resource with --group and --kind', () => {
    const renamed = projectFiles('x', { group: 'web.example.org', kind: 'Website' });
    for (const file of ['operator.ts', 'operator.test.ts']) {
      const text = renamed[file] ?? '';
      assert.doesNotMatch(text, /StaticSite|sites\.example\.com|shortNames/);
      assert.match(text, /Website/);
    }
    assert.match(renamed['operator.ts'] ?? '', /group: 'web\.example\.org'/);
    assert.match(renamed['operator.ts'] ?? '', /name: 'website'/);
    // says where it came from, not that it is a static web site
    assert.match(
      renamed['operator.ts'] ?? '',
      /^\/\/ Website: scaffolded from kubebus' static-site example/,
    );
    assert.doesNotMatch(renamed['operator.ts'] ?? '', /^\/\/ A static web site/m);
    assert.match(renamed['operator.test.ts'] ?? '', /apiVersion: 'web\.example\.org\/v1'/);
  });

  it('makes the resource cluster-scoped with --scope Cluster, its children in a namespace it names', () => {
    const cluster = projectFiles('x', { scope: 'Cluster', kind: 'Website' })['operator.ts'] ?? '';
    assert.match(cluster, /scope: 'Cluster',/);
    assert.doesNotMatch(cluster, /Namespaced|site\.metadata\.namespace|\{ name, namespace \} =/);
    assert.match(cluster, /const namespace = 'default';/);
    // every namespaced child is applied with that namespace: none is left to a default it lacks
    const applied = [...cluster.matchAll(/ctx\.apply\(kinds\.\w+, \{\s*metadata: \{([^}]*)\}/g)];
    assert.equal(applied.length, 3);
    for (const [, metadata] of applied) assert.match(metadata ?? '', /\bnamespace\b/);
    assert.match(cluster, /url: `http:\/\/\$\{name\}\.\$\{namespace\}\.svc`/);
    assert.match(cluster, /kind: 'Website'/);
    // Namespaced is the example as it is
    assert.equal(
      projectFiles('x', { scope: 'Namespaced' })['operator.ts'],
      projectFiles('x')['operator.ts'],
    );
  });
});
