// Where the test tools come from, in the servers' order: KUBEBUS_TOOLS, then
// PATH at a supported version, then an earlier download or Go build, then a
// download (testbed-tool-archives.test.ts), then the Go build; composecheck
// through `docker compose` where Docker Compose v2 answers. The binaries here
// are small scripts that print a version, as the tools do.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { escapedModule } from '../bed/tool-crds.js';
import { DEFAULT_GOPROXY, firstProxy, pinnedTools } from '../bed/tool-sources.js';
import { resolveToolBinaries } from '../bed/tools.js';

/** A directory of scripts: name → what it prints. */
function binDir(scripts: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-bin-'));
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

const printing = (version: string) => `echo "${version}"`;

/** An empty cache and no downloads: what is not found is built. */
const offline = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  KUBEBUS_CACHE: mkdtempSync(join(tmpdir(), 'kubebus-cache-')),
  KUBEBUS_NO_DOWNLOAD: '1',
  ...extra,
});

const noBuild = () => {
  throw new Error('the Go build was asked for');
};

describe('test bed tools', () => {
  const pins = pinnedTools();

  it('takes KUBEBUS_TOOLS first, as it is', async () => {
    const given = binDir({ kustomize: 'exit 1', helm: 'exit 1', composecheck: 'exit 1' });
    const onPath = binDir({ kustomize: printing(pins.kustomize) });
    const found = await resolveToolBinaries(offline({ KUBEBUS_TOOLS: given, PATH: onPath }), {
      build: noBuild,
    });
    for (const name of ['kustomize', 'helm', 'composecheck'] as const)
      assert.equal(found.get(name), join(given, name));
  });

  it('takes supported tools on PATH, passes over unsupported ones, and builds only those', async () => {
    const path = binDir({
      kustomize: printing('v5.3.0'),
      // helm 4 is not what the tests are written for; 3.11 is older than they need
      helm: 'case "$*" in "version --template {{.Version}}") echo v4.0.1 ;; *) exit 2 ;; esac',
      composecheck: 'exit 0',
    });
    const notes: string[] = [];
    const found = await resolveToolBinaries(offline({ PATH: path }), {
      build: () => '/built',
      note: (line) => notes.push(line),
    });
    assert.equal(found.get('kustomize'), join(path, 'kustomize'));
    assert.equal(found.get('composecheck'), join(path, 'composecheck'));
    assert.equal(found.get('helm'), '/built/helm');
    assert.deepEqual(notes, [
      'downloads are off (KUBEBUS_NO_DOWNLOAD=1); using the Go build for helm (test/bed/tools/build.sh: minutes the first time)',
    ]);

    const older = binDir({ helm: printing('v3.11.3'), kustomize: printing('v4.5.7') });
    const built = await resolveToolBinaries(offline({ PATH: `${older}:${path}` }), {
      build: () => '/built',
      note: () => undefined,
    });
    // the first one on PATH decides, as a shell would run it
    assert.equal(built.get('helm'), '/built/helm');
    assert.equal(built.get('kustomize'), '/built/kustomize');
    const current = binDir({ helm: printing('v3.14.2') });
    assert.equal(
      (await resolveToolBinaries(offline({ PATH: `${current}:${path}` }), { build: noBuild })).get(
        'helm',
      ),
      join(current, 'helm'),
    );
  });

  it('runs composecheck as `docker compose config` where Docker Compose v2 answers', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'kubebus-docker-')), 'args');
    // a docker whose compose plugin answers, and which records what it is asked
    const path = binDir({
      docker: `printf '%s\\n' "$*" >> ${log}; [ "$*" = "compose version --short" ] && echo "2.40.3"; exit 0`,
      kustomize: printing(pins.kustomize),
      helm: printing(pins.helm),
    });
    const env = offline({ PATH: path });
    const found = await resolveToolBinaries(env, { build: noBuild });
    const composecheck = found.get('composecheck') ?? '';
    assert.equal(
      composecheck,
      join(env['KUBEBUS_CACHE'] ?? '', 'tools/docker-compose/composecheck'),
    );
    const run = spawnSync(composecheck, ['/repo/docker-compose.yml', '/repo/.env'], {
      env: { PATH: path },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
      'compose version --short',
      'compose --project-directory /repo -f /repo/docker-compose.yml --env-file /repo/.env config --format json',
    ]);
  });

  it('passes over a `docker compose` that is not Docker Compose v2 (compose v1, podman-compose)', async () => {
    for (const short of ['1.29.2', 'podman-compose version 1.0.6', '']) {
      const path = binDir({
        docker: `[ "$*" = "compose version --short" ] && echo "${short}"; exit 0`,
        kustomize: printing(pins.kustomize),
        helm: printing(pins.helm),
      });
      const notes: string[] = [];
      const found = await resolveToolBinaries(offline({ PATH: path }), {
        build: () => '/built',
        note: (line) => notes.push(line),
      });
      assert.equal(found.get('composecheck'), '/built/composecheck', short);
      assert.match(notes[0] ?? '', /^Docker Compose v2 .* is not installed; using the Go build/);
    }
  });

  it('reads GOPROXY as Go does and escapes module paths as the proxy protocol does', () => {
    assert.equal(firstProxy(undefined), DEFAULT_GOPROXY);
    assert.equal(firstProxy('https://goproxy.example/,direct'), 'https://goproxy.example');
    assert.equal(firstProxy('direct|https://b.example'), 'https://b.example');
    assert.equal(firstProxy('off'), undefined);
    assert.equal(firstProxy('direct'), undefined);
    assert.equal(escapedModule('github.com/BurntSushi/toml'), 'github.com/!burnt!sushi/toml');
  });
});
