// Images pinned by digest, made possible and checked (no registry here to
// resolve a digest, so none is invented): every image the repository ships a
// reference to goes through one setting a release pins — a Dockerfile build
// argument, a .env variable for compose, a kustomize `images:` entry, the
// chart's image.digest — and deploy/scripts/check-pinned-images.ts --release
// refuses any still named by tag. The digests below are test data.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  composeImages,
  dockerfileImages,
  manifestImages,
} from '../../deploy/scripts/pinned-images.js';
import { toolBinary } from '../bed/tools.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'deploy/scripts/check-pinned-images.ts');
const DIGEST = `sha256:${'0'.repeat(64)}`;

function check(args: readonly string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', KUSTOMIZE: toolBinary('kustomize'), ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('image references', { timeout: 120_000 }, () => {
  it('each goes through a setting a release pins; today all are by tag', () => {
    const { code, stdout, stderr } = check([]);
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stdout, /^FIXED/m);
    for (const setting of [
      '--build-arg NODE_IMAGE',
      '--build-arg RUNTIME_IMAGE',
      'K3S_IMAGE in .env',
      'BUSYBOX_IMAGE in .env',
      'ALPINE_IMAGE in .env',
      'NATS_IMAGE in .env',
      'images: [{ name: ghcr.io/kubebus/kubebus, digest: … }]',
      'images: [{ name: nats, digest: … }]',
      'images: [{ name: natsio/nats-server-config-reloader, digest: … }]',
      'image.digest in the values',
    ])
      assert.ok(stdout.includes(`pin with ${setting}`), `no reference pinned with ${setting}`);
  });

  it('--release refuses references by tag, in one line naming them', () => {
    const { code, stderr } = check(['--release']);
    assert.equal(code, 1);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0] ?? '', /^check-pinned-images: --release: not pinned by digest: /);
    for (const image of [
      'node:26-bookworm-slim',
      'nats:2.12-alpine',
      'ghcr.io/kubebus/kubebus:0.1.0',
    ])
      assert.ok(lines[0]?.includes(image), image);
  });

  it('--release passes once every setting pins a digest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubebus-pins-'));
    const base = relative(dir, join(root, 'deploy/kubernetes/base'));
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `resources: [${base}]`,
        'images:',
        ...['ghcr.io/kubebus/kubebus', 'nats', 'natsio/nats-server-config-reloader'].map(
          (name) => `  - { name: ${name}, digest: "${DIGEST}" }`,
        ),
        '',
      ].join('\n'),
    );
    const example = readFileSync(join(root, '.env.example'), 'utf8');
    writeFileSync(
      join(dir, 'release.env'),
      example.replace(/^([A-Z0-9_]+_IMAGE)=(\S+)$/gm, `$1=$2@${DIGEST}`),
    );
    const values = readFileSync(join(root, 'deploy/helm/databasecluster/values.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'values.yaml'),
      values.replace(/^ {2}digest: ""$/m, `  digest: "${DIGEST}"`),
    );
    const { code, stdout, stderr } = check(
      [
        '--release',
        '--overlay',
        dir,
        '--env-file',
        join(dir, 'release.env'),
        '--values',
        join(dir, 'values.yaml'),
      ],
      {
        NODE_IMAGE: `node:26-bookworm-slim@${DIGEST}`,
        RUNTIME_IMAGE: `debian:bookworm-slim@${DIGEST}`,
      },
    );
    assert.equal(code, 0, stderr);
    const lines = stdout.trim().split('\n');
    assert.ok(lines.length >= 10, stdout);
    for (const line of lines) assert.match(line, /^pinned /);
  });

  it('finds a reference no setting reaches', () => {
    const [from] = dockerfileImages('x', 'FROM node:26-bookworm-slim\nRUN true\n', {});
    assert.equal(from?.setting, '');
    const [service] = composeImages('c', 'services:\n  a:\n    image: nats:2.12\n', {});
    assert.equal(service?.setting, '');
    // a stage named earlier is not an image
    assert.equal(
      dockerfileImages('y', 'ARG I=node:26\nFROM ${I} AS build\nFROM build\n', {}).length,
      1,
    );
    const [container] = manifestImages('m', [
      {
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'a/b:1' }] },
      },
    ]);
    assert.equal(container?.image, 'a/b:1');
  });
});
