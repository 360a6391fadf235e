// `kubebus generate` without servers: what stdout holds by default and with
// --only, and the module path the Deployments are given with --out.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Exit, Host } from './command-spec.js';
import { dispatch } from './dispatch.js';

const OPERATOR = fileURLToPath(
  new URL('../../../../examples/staticsite/operator.ts', import.meta.url),
);

async function kubebus(
  args: readonly string[],
): Promise<{ exit: Exit; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const host: Host = {
    env: {},
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    interrupted: () => new AbortController().signal,
  };
  const exit = await dispatch(['generate', ...args], host);
  return { exit, stdout, stderr };
}

describe('kubebus generate', () => {
  it('prints the CRD and RBAC by default, YAML for kubectl, and the NATS users only alone', async () => {
    const yaml = await kubebus([OPERATOR]);
    assert.equal(yaml.exit, 0, yaml.stderr);
    assert.match(yaml.stdout, /^kind: CustomResourceDefinition$/m);
    assert.match(yaml.stdout, /^kind: ClusterRole$/m);
    assert.doesNotMatch(yaml.stdout, /permissions/);
    const users = await kubebus([OPERATOR, '--only', 'nats']);
    assert.equal(users.exit, 0, users.stderr);
    assert.match(users.stdout, /user: "staticsite-watcher"/);
    for (const mixed of ['crd,nats', 'nats,rbac']) {
      const refused = await kubebus([OPERATOR, '--only', mixed]);
      assert.equal(refused.exit, 2, mixed);
      assert.equal(refused.stdout, '');
      assert.equal(
        refused.stderr,
        'kubebus: --only nats prints nats-server configuration, not YAML for kubectl: ask for it alone (--only nats)\n',
      );
    }
  });

  it('refuses a module path of this machine for the image, and takes a relative one as is', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kubebus-generate-'));
    const absolute = await kubebus([OPERATOR, '--out', out]);
    assert.equal(absolute.exit, 2);
    assert.match(
      absolute.stderr,
      /^kubebus: --module: \/.*operator\.ts is a path on this machine, not in the image; say where the module sits in the image/,
    );
    assert.equal(existsSync(join(out, 'kustomize')), false, 'nothing written');
    // the same file by a path that leaves the current directory first
    const roundabout = join('..', basename(process.cwd()), relative(process.cwd(), OPERATOR));
    const outside = await kubebus([roundabout, '--out', out]);
    assert.equal(outside.exit, 2, 'a default path outside the project');
    assert.match(outside.stderr, /^kubebus: --module: \.\.\/.* is a path on this machine/);
    // given, a path in the image is taken as is, absolute or not
    const inImage = await kubebus([
      OPERATOR,
      '--out',
      out,
      '--module',
      '/operator/dist/operator.js',
    ]);
    assert.equal(inImage.exit, 0, inImage.stderr);
    assert.match(
      readFileSync(join(out, 'kustomize', 'deployments.yaml'), 'utf8'),
      /\/operator\/dist\/operator\.js/,
    );
    const given = relative(process.cwd(), OPERATOR);
    const written = await kubebus([given, '--out', out]);
    assert.equal(written.exit, 0, written.stderr);
    const deployments = readFileSync(join(out, 'kustomize', 'deployments.yaml'), 'utf8');
    assert.ok(deployments.includes(given), 'the Deployments run the module at the path given');
    const chosen = await kubebus([OPERATOR, '--out', out, '--module', 'dist/operator.js']);
    assert.equal(chosen.exit, 0, chosen.stderr);
    assert.match(
      readFileSync(join(out, 'kustomize', 'deployments.yaml'), 'utf8'),
      /dist\/operator\.js/,
    );
  });

  it('warns that the Deployments run a moving tag without --image, and not with one', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kubebus-generate-'));
    const module = relative(process.cwd(), OPERATOR);
    const unnamed = await kubebus([module, '--out', out]);
    assert.equal(unnamed.exit, 0, unnamed.stderr);
    assert.match(
      unnamed.stderr,
      /^kubebus generate: warning: no --image: the Deployments run kubebus-staticsite:latest, a tag that moves/m,
    );
    const named = await kubebus([module, '--out', out, '--image', 'registry.example/site:1.0.0']);
    assert.equal(named.exit, 0, named.stderr);
    assert.doesNotMatch(named.stderr, /--image/);
    assert.match(
      readFileSync(join(out, 'kustomize', 'deployments.yaml'), 'utf8'),
      /image: registry\.example\/site:1\.0\.0/,
    );
  });
});
