// The images, checked by reading their Dockerfiles (no image can be built or
// pulled where kubebus is developed): the repository's own and the one
// `kubebus init` writes follow one pattern (packages/kubebus/src/cli/
// runtime-image.ts) — base images as build arguments a release pins, a build
// stage that installs from the lockfile, and a runtime stage with node and the
// code alone: no npm, npx or corepack, no RUN, a numeric user. The build
// context leaves out .env and the dev overlay's made secrets.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { IMAGE_ARGS } from '../../packages/kubebus/src/cli/runtime-image.js';
import { projectFiles } from '../../packages/kubebus/src/cli/templates.js';
import { parseDockerfile, type Stage } from '../../deploy/scripts/dockerfile-stages.js';

const file = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');

const NODE_COPY = 'COPY --from=build /usr/local/bin/node /usr/local/bin/node';

/** What both images' stages must be; answers the runtime stage. */
function checkPattern(text: string, install: string): Stage {
  const dockerfile = parseDockerfile(text);
  // the images come from build arguments whose defaults are the pattern's tags
  assert.deepEqual(dockerfile.args, IMAGE_ARGS);
  const [build, runtime, ...more] = dockerfile.stages;
  assert.equal(more.length, 0, 'two stages');
  assert.equal(build?.fromAsWritten, '${NODE_IMAGE}');
  assert.equal(runtime?.fromAsWritten, '${RUNTIME_IMAGE}');
  assert.equal(build?.name, 'build');
  assert.ok(build?.lines.includes(install), `the build stage runs ${install}`);
  // the node image's Debian release, so the binary finds the libc it was built against
  const release = /^node:\d+-(\w+)-slim$/.exec(build?.from ?? '')?.[1];
  assert.equal(runtime?.from, `debian:${release ?? '?'}-slim`);
  const lines = runtime?.lines ?? [];
  assert.equal(
    lines.find((line) => line.startsWith('COPY')),
    NODE_COPY,
    'node copied first',
  );
  for (const line of lines) {
    assert.doesNotMatch(line, /^RUN\b/, 'the runtime stage runs nothing at build time');
    assert.doesNotMatch(line, /\b(npm|npx|corepack|yarn|pnpm)\b/, line);
  }
  assert.ok(
    lines.some((line) => /^USER [1-9]\d*:[1-9]\d*$/.test(line)),
    'a numeric non-root user',
  );
  assert.equal(lines.filter((line) => line.startsWith('ENTRYPOINT ["node"')).length, 1);
  return runtime ?? { from: '', fromAsWritten: '', lines: [] };
}

describe('Dockerfile', () => {
  it('builds from the lockfile and runs node and the bundle alone', () => {
    const runtime = checkPattern(file('Dockerfile'), 'RUN npm ci --no-audit --no-fund');
    assert.deepEqual(
      runtime.lines.filter((line) => line.startsWith('COPY')),
      [
        NODE_COPY,
        'COPY --from=build /src/node_modules ./node_modules',
        'COPY --from=build /src/dist ./dist',
      ],
    );
    assert.ok(runtime.lines.includes('USER 1000:1000'));
    assert.ok(
      runtime.lines.includes('ENTRYPOINT ["node", "--enable-source-maps", "dist/kubebus.js"]'),
    );
  });

  it('keeps .env and the made dev secrets out of the build context', () => {
    const ignored = file('.dockerignore')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const path of [
      '.env',
      '.env.*',
      'deploy/kubernetes/overlays/dev/nats-users.env',
      'deploy/kubernetes/overlays/dev/nats-tls/',
      'deploy/kubernetes/overlays/dev/metrics-tls/',
      '*.pem',
      '*.key',
      'node_modules',
    ])
      assert.ok(ignored.includes(path), `.dockerignore leaves out ${path}`);
  });
});

describe("kubebus init's Dockerfile", () => {
  const files = projectFiles('my-operator');

  it('follows the same pattern: no npm in the runtime, the kubebus binary as entrypoint', () => {
    const runtime = checkPattern(
      files['Dockerfile'] ?? '',
      'RUN npm ci --omit=dev --omit=optional --no-audit --no-fund',
    );
    assert.deepEqual(
      runtime.lines.filter((line) => line.startsWith('COPY')),
      [NODE_COPY, 'COPY --from=build /operator/node_modules ./node_modules', 'COPY . ./'],
    );
    // the package's bin, run by node itself (no shebang, no /usr/bin/env lookup)
    const bin = (
      JSON.parse(file('packages/kubebus/package.json')) as { bin: Record<string, string> }
    ).bin['kubebus'];
    assert.ok(
      runtime.lines.includes(`ENTRYPOINT ["node", "node_modules/kubebus/${bin ?? '?'}"]`),
      runtime.lines.join('\n'),
    );
    assert.ok(runtime.lines.includes('CMD ["run", "operator.ts"]'));
  });

  it('keeps .env and key files out of the build context', () => {
    const ignored = (files['.dockerignore'] ?? '').split('\n');
    for (const path of [
      '**/node_modules/',
      '**/.env',
      '**/.env.*',
      '**/*.pem',
      '**/*.key',
      '**/.npmrc',
      '.git/',
      'deploy/',
    ])
      assert.ok(ignored.includes(path), `.dockerignore leaves out ${path}`);
    // the build stage copies the tarball kubebus may be installed from
    assert.ok(!ignored.some((path) => path.includes('tgz')), ignored.join());
  });

  it('runs as the uid the generated Deployments give its pods', () => {
    assert.ok((files['Dockerfile'] ?? '').includes('\nUSER 1000:1000\n'));
  });
});
