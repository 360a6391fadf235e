// The image, checked by reading the Dockerfile (no image can be built or pulled
// where kubebus is developed): the runtime stage carries node and the bundle,
// and nothing that installs or runs packages — no npm, npx or corepack — and
// the build context leaves out .env and the dev overlay's made secrets.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const file = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');

interface Stage {
  readonly from: string;
  readonly name?: string;
  readonly lines: string[];
}

/** The Dockerfile's stages, each with its instructions (comments and continuations joined). */
function stages(text: string): Stage[] {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const found: Stage[] = [];
  for (const line of instructions) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from !== null)
      found.push({
        from: from[1] ?? '',
        ...(from[2] === undefined ? {} : { name: from[2] }),
        lines: [],
      });
    else found.at(-1)?.lines.push(line);
  }
  return found;
}

describe('Dockerfile', () => {
  const all = stages(file('Dockerfile'));
  const build = all[0];
  const runtime = all.at(-1);

  it('builds from the lockfile in its own stage', () => {
    assert.equal(all.length, 2);
    assert.equal(build?.name, 'build');
    assert.match(build?.from ?? '', /^node:\d+-bookworm-slim$/);
    assert.ok(build?.lines.includes('RUN npm ci --no-audit --no-fund'), 'npm ci, not npm install');
  });

  it('runs on Debian slim with the node binary alone: no npm, npx or corepack', () => {
    // the node image's Debian release, so the binary finds the libc it was built against
    const release = /-(\w+)-slim$/.exec(build?.from ?? '')?.[1];
    assert.equal(runtime?.from, `debian:${release ?? '?'}-slim`);
    const copied = (runtime?.lines ?? []).filter((line) => line.startsWith('COPY'));
    assert.deepEqual(copied, [
      'COPY --from=build /usr/local/bin/node /usr/local/bin/node',
      'COPY --from=build /src/node_modules ./node_modules',
      'COPY --from=build /src/dist ./dist',
    ]);
    for (const line of runtime?.lines ?? []) {
      assert.doesNotMatch(line, /^RUN\b/, 'the runtime stage runs nothing at build time');
      assert.doesNotMatch(line, /\b(npm|npx|corepack|yarn|pnpm)\b/, line);
    }
    assert.ok(runtime?.lines.includes('USER 1000:1000'), 'a numeric non-root user');
    assert.ok(
      runtime?.lines.includes('ENTRYPOINT ["node", "--enable-source-maps", "dist/kubebus.js"]'),
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
      'node_modules',
    ])
      assert.ok(ignored.includes(path), `.dockerignore leaves out ${path}`);
  });
});
