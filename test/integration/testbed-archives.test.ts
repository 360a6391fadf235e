// The prebuilt-server download against a loopback HTTP server that serves what
// upstream serves, in upstream's layout: controller-tools' envtest index and
// archive (controller-tools/envtest/{kube-apiserver,etcd,kubectl}), a nats-server
// release archive with its SHA256SUMS, and dl.k8s.io's kube-controller-manager
// with its .sha256. The archives are made here from the servers the Go build
// cached, so the binaries fetched are real ones, and are run.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isArchiveError } from '../bed/archive-error.js';
import { pinnedVersions, platformOf } from '../bed/archive-sources.js';
import { findServer, resolveServers, serversBinDir, type ServerBinary } from '../bed/binaries.js';
import {
  digestOf,
  startArchiveHost,
  tarball,
  type ArchiveHost,
  type Routes,
} from '../support/archive-host.js';

const ALL: readonly ServerBinary[] = [
  'kube-apiserver',
  'kube-controller-manager',
  'etcd',
  'nats-server',
];
const pinned = pinnedVersions();
const platform = platformOf() ?? { os: 'linux', arch: 'amd64' };
const suffix = `${platform.os}-${platform.arch}`;
const envtestName = `envtest-${pinned.kubernetes}-${suffix}.tar.gz`;
const natsDir = `nats-server-${pinned.nats}-${suffix}`;
const repo = fileURLToPath(new URL('../..', import.meta.url));

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** What `<server> --version` prints at `version`, and nothing longer (v1.37.2, not v1.37.20). */
const printing = (prefix: string, version: string) =>
  new RegExp(`^${escaped(prefix)}${escaped(version)}$`, 'm');

const digest = digestOf;

interface Host extends ArchiveHost {
  /** the environment that points resolution at this host, with its own empty cache */
  env(): NodeJS.ProcessEnv;
}

async function startHost(routes: Routes): Promise<Host> {
  const host = await startArchiveHost(routes);
  return Object.assign(host, {
    env: () => ({
      PATH: '',
      HOME: mkdtempSync(join(tmpdir(), 'kubebus-home-')),
      KUBEBUS_CACHE: mkdtempSync(join(tmpdir(), 'kubebus-cache-')),
      KUBEBUS_ENVTEST_INDEX_URL: `${host.url}/envtest/envtest-releases.yaml`,
      KUBEBUS_NATS_RELEASES_URL: `${host.url}/nats`,
      KUBEBUS_KUBE_RELEASES_URL: `${host.url}/kube`,
    }),
  });
}

const envtestIndex = (url: string, hash: string) =>
  [
    'releases:',
    `  ${pinned.kubernetes}:`,
    `    ${envtestName}:`,
    `      hash: ${hash}`,
    `      selfLink: ${url}/envtest/releases/${envtestName}`,
    '',
  ].join('\n');

const noBuild = () => {
  throw new Error('the Go build was asked for');
};

const resolveScript = () =>
  [
    `import { resolveServers } from ${JSON.stringify(join(repo, 'test/bed/binaries.ts'))};`,
    `const found = await resolveServers(${JSON.stringify(ALL)}, process.env, { build() { throw new Error('the Go build was asked for'); } });`,
    'process.stdout.write(JSON.stringify(Object.fromEntries(found)));',
  ].join('\n');

interface Resolved {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Resolves in a process of its own, so nothing this one remembers helps it. */
function resolveElsewhere(env: NodeJS.ProcessEnv): Resolved {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', resolveScript()],
    { cwd: repo, env, encoding: 'utf8', timeout: 120_000 },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without waiting: several of these run at once. */
function resolveConcurrently(env: NodeJS.ProcessEnv): Promise<Resolved> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', resolveScript()],
      { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('prebuilt servers from a loopback archive host', () => {
  let host: Host;
  let envtestArchive: string;
  let built: string;

  before(async () => {
    built = serversBinDir();
    const www = mkdtempSync(join(tmpdir(), 'kubebus-www-'));
    const kubectl = join(www, 'kubectl');
    writeFileSync(kubectl, `#!/bin/sh\necho "Client Version: ${pinned.kubernetes}"\n`);
    envtestArchive = tarball(join(www, envtestName), {
      'controller-tools/envtest/kube-apiserver': join(built, 'kube-apiserver'),
      'controller-tools/envtest/etcd': join(built, 'etcd'),
      'controller-tools/envtest/kubectl': kubectl,
    });
    writeFileSync(join(www, 'LICENSE'), 'Apache-2.0\n');
    const natsArchive = tarball(join(www, `${natsDir}.tar.gz`), {
      [`${natsDir}/nats-server`]: join(built, 'nats-server'),
      [`${natsDir}/LICENSE`]: join(www, 'LICENSE'),
    });
    const kcm = join(built, 'kube-controller-manager');
    const kcmPath = `/kube/${pinned.kubernetes}/bin/${platform.os}/${platform.arch}/kube-controller-manager`;
    const routes: Routes = new Map([
      [`/envtest/releases/${envtestName}`, { file: envtestArchive }],
      [
        `/nats/${pinned.nats}/SHA256SUMS`,
        {
          text: `${'0'.repeat(64)}  ${natsDir}.zip\n${digest('sha256', natsArchive)}  ${natsDir}.tar.gz\n`,
        },
      ],
      [`/nats/${pinned.nats}/${natsDir}.tar.gz`, { file: natsArchive }],
      [kcmPath, { file: kcm }],
      [`${kcmPath}.sha256`, { text: `${digest('sha256', kcm)}\n` }],
    ]);
    host = await startHost(routes);
    routes.set('/envtest/envtest-releases.yaml', {
      text: envtestIndex(host.url, digest('sha512', envtestArchive)),
    });
  });

  after(async () => {
    await host.close();
  });

  it('downloads, verifies and caches all four servers, which run at the pinned versions', async () => {
    const env = host.env();
    const notes: string[] = [];
    const found = await resolveServers(ALL, env, {
      build: noBuild,
      note: (line) => notes.push(line),
    });
    const cache = join(env['KUBEBUS_CACHE'] ?? '', 'archives');
    const expected: Record<ServerBinary, [string, RegExp]> = {
      'kube-apiserver': [
        `envtest-${pinned.kubernetes}-${suffix}`,
        printing('Kubernetes ', pinned.kubernetes),
      ],
      etcd: [
        `envtest-${pinned.kubernetes}-${suffix}`,
        printing('etcd Version: ', pinned.etcd.replace(/^v/, '')),
      ],
      'nats-server': [natsDir, printing('nats-server: ', pinned.nats)],
      'kube-controller-manager': [
        `kube-controller-manager-${pinned.kubernetes}-${suffix}`,
        printing('Kubernetes ', pinned.kubernetes),
      ],
    };
    for (const name of ALL) {
      const [dir, version] = expected[name];
      assert.equal(found.get(name), join(cache, dir, name));
      accessSync(join(cache, dir, name), constants.X_OK);
      assert.match(
        execFileSync(join(cache, dir, name), ['--version'], { encoding: 'utf8' }),
        version,
      );
    }
    // kubectl comes with the envtest archive, for people; nothing else is kept
    accessSync(join(cache, expected.etcd[0], 'kubectl'), constants.X_OK);
    assert.deepEqual(readdirSync(join(cache, expected.etcd[0])).sort(), [
      'etcd',
      'kube-apiserver',
      'kubectl',
    ]);
    assert.deepEqual(readdirSync(join(cache, natsDir)), ['nats-server']);
    assert.equal(notes.filter((line) => line.startsWith('downloading ')).length, 3);
    assert.ok(host.requests.includes(`/envtest/releases/${envtestName}`));

    // a second resolution, in a fresh process, takes the cache and asks the host nothing
    const asked = host.requests.length;
    const again = resolveElsewhere(env);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), Object.fromEntries(found));
    assert.equal(host.requests.length, asked);
    // and the test bed's synchronous lookup finds the download too
    assert.equal(findServer('etcd', env, noBuild), found.get('etcd'));
  });

  it('refuses a checksum mismatch in one line and caches nothing', async () => {
    const env = host.env();
    const real = host.routes.get('/envtest/envtest-releases.yaml');
    host.routes.set('/envtest/envtest-releases.yaml', {
      text: envtestIndex(host.url, createHash('sha512').update('something else').digest('hex')),
    });
    try {
      await assert.rejects(
        resolveServers(['kube-apiserver', 'etcd'], env, { build: noBuild, note: () => undefined }),
        (error: unknown) =>
          isArchiveError(error) &&
          error.code === 'refused' &&
          !error.message.includes('\n') &&
          new RegExp(
            `^checksum mismatch for ${escaped(envtestName)} .*is not the published .*KUBEBUS_NO_DOWNLOAD=1`,
          ).test(error.message),
      );
    } finally {
      if (real !== undefined) host.routes.set('/envtest/envtest-releases.yaml', real);
    }
    assert.deepEqual(readdirSync(join(env['KUBEBUS_CACHE'] ?? '', 'archives')), []);
  });

  it('refuses a corrupt archive that matches its checksum, in one line, caching nothing', async () => {
    const env = host.env();
    const www = mkdtempSync(join(tmpdir(), 'kubebus-www-'));
    // the real archive cut short: gzip's stream ends in the middle of kube-apiserver
    const cut = join(www, envtestName);
    writeFileSync(cut, readFileSync(envtestArchive).subarray(0, 4 * 1024 * 1024));
    const realIndex = host.routes.get('/envtest/envtest-releases.yaml');
    const realArchive = host.routes.get(`/envtest/releases/${envtestName}`);
    host.routes.set('/envtest/envtest-releases.yaml', {
      text: envtestIndex(host.url, digest('sha512', cut)),
    });
    host.routes.set(`/envtest/releases/${envtestName}`, { file: cut });
    try {
      await assert.rejects(
        resolveServers(['kube-apiserver', 'etcd'], env, { build: noBuild, note: () => undefined }),
        (error: unknown) =>
          isArchiveError(error) &&
          error.code === 'refused' &&
          !error.message.includes('\n') &&
          /is not a readable \.tar\.gz .*KUBEBUS_NO_DOWNLOAD=1/.test(error.message),
      );
    } finally {
      if (realIndex !== undefined) host.routes.set('/envtest/envtest-releases.yaml', realIndex);
      if (realArchive !== undefined)
        host.routes.set(`/envtest/releases/${envtestName}`, realArchive);
    }
    assert.deepEqual(readdirSync(join(env['KUBEBUS_CACHE'] ?? '', 'archives')), []);
  });

  it('two resolutions at once into an empty cache both succeed and leave one complete copy', async () => {
    const env = host.env();
    // and what a download killed earlier left behind goes
    const killed = join(env['KUBEBUS_CACHE'] ?? '', 'archives', `.${natsDir}-Xk4q9Z`);
    mkdirSync(killed, { recursive: true });
    writeFileSync(join(killed, `.download-${natsDir}.tar.gz`), 'the first megabytes');
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    writeFileSync(join(killed, '.owner'), `${ended.stdout} ${hostname()}\n`);
    host.pairUp = true;
    host.requests.length = 0;
    let first: Resolved | undefined;
    let second: Resolved | undefined;
    try {
      [first, second] = await Promise.all([resolveConcurrently(env), resolveConcurrently(env)]);
    } finally {
      host.pairUp = false;
    }
    assert.equal(first?.status, 0, first?.stderr);
    assert.equal(second?.status, 0, second?.stderr);
    assert.deepEqual(JSON.parse(first?.stdout ?? ''), JSON.parse(second?.stdout ?? ''));
    // both downloaded every archive, at the same time (the host held each until both asked)
    assert.equal(
      host.requests.filter((path) => path === `/envtest/releases/${envtestName}`).length,
      2,
    );
    const cache = join(env['KUBEBUS_CACHE'] ?? '', 'archives');
    // no staging folder, old or new, and no second copy: one directory per archive
    assert.deepEqual(readdirSync(cache).sort(), [
      `envtest-${pinned.kubernetes}-${suffix}`,
      `kube-controller-manager-${pinned.kubernetes}-${suffix}`,
      natsDir,
    ]);
    for (const [name, path] of Object.entries(JSON.parse(first?.stdout ?? '') as object)) {
      assert.equal(typeof path, 'string');
      assert.equal(
        digest('sha256', path as string),
        digest('sha256', join(built, name)),
        `${name} is whole`,
      );
    }
  });

  it("with KUBEBUS_SERVER_SUMS takes digests from that file alone, never the host's lists", async () => {
    const env = host.env();
    const sums = join(mkdtempSync(join(tmpdir(), 'kubebus-sums-')), 'SUMS');
    const natsArchive = host.routes.get(`/nats/${pinned.nats}/${natsDir}.tar.gz`);
    assert.ok(natsArchive !== undefined && 'file' in natsArchive);
    writeFileSync(
      sums,
      [
        `${digest('sha512', envtestArchive)}  ${envtestName}`,
        `${digest('sha256', natsArchive.file)}  ${natsDir}.tar.gz`,
        `${digest('sha256', join(built, 'kube-controller-manager'))}  ${pinned.kubernetes}/bin/${platform.os}/${platform.arch}/kube-controller-manager`,
        '',
      ].join('\n'),
    );
    // the host's own index lists a digest that does not match: it is not used
    const realIndex = host.routes.get('/envtest/envtest-releases.yaml');
    host.routes.set('/envtest/envtest-releases.yaml', {
      text: envtestIndex(host.url, createHash('sha512').update('a swapped archive').digest('hex')),
    });
    host.requests.length = 0;
    try {
      const found = await resolveServers(
        ALL,
        { ...env, KUBEBUS_SERVER_SUMS: sums },
        { build: noBuild, note: () => undefined },
      );
      assert.deepEqual([...found.keys()].sort(), [...ALL].sort());
    } finally {
      if (realIndex !== undefined) host.routes.set('/envtest/envtest-releases.yaml', realIndex);
    }
    assert.equal(host.requests.filter((path) => path.endsWith('SHA256SUMS')).length, 0);
    assert.equal(host.requests.filter((path) => path.endsWith('.sha256')).length, 0);

    // a vetted digest the host's bytes do not match is refused, though the host's lists agree
    const other = host.env();
    writeFileSync(
      sums,
      `${createHash('sha256').update('what the site vetted').digest('hex')}  ${natsDir}.tar.gz\n`,
    );
    await assert.rejects(
      resolveServers(
        ['nats-server'],
        { ...other, KUBEBUS_SERVER_SUMS: sums },
        { build: noBuild, note: () => undefined },
      ),
      (error: unknown) =>
        isArchiveError(error) &&
        error.code === 'refused' &&
        !error.message.includes('\n') &&
        error.message.startsWith(`checksum mismatch for ${natsDir}.tar.gz `) &&
        error.message.includes(`is not the vetted (${sums})`),
    );
    // and one it does not list is refused, not fetched unchecked
    await assert.rejects(
      resolveServers(
        ['kube-controller-manager'],
        { ...other, KUBEBUS_SERVER_SUMS: sums },
        { build: noBuild, note: () => undefined },
      ),
      (error: unknown) =>
        isArchiveError(error) &&
        error.code === 'refused' &&
        /lists no digest for kube-controller-manager: add its vetted sha256 or sha512, or unset KUBEBUS_SERVER_SUMS$/.test(
          error.message,
        ),
    );
    assert.deepEqual(readdirSync(join(other['KUBEBUS_CACHE'] ?? '', 'archives')), []);
  });

  it('goes on to the Go build when the host is unreachable, and says so in one line', async () => {
    const env = { ...host.env(), KUBEBUS_NATS_RELEASES_URL: 'http://127.0.0.1:1/nats' };
    const notes: string[] = [];
    const found = await resolveServers(['nats-server'], env, {
      build: () => built,
      note: (line) => notes.push(line),
    });
    assert.equal(found.get('nats-server'), join(built, 'nats-server'));
    assert.equal(notes.length, 1);
    assert.match(
      notes[0] ?? '',
      /^the download failed: could not fetch http:\/\/127\.0\.0\.1:1\/nats\/.*; using the Go build for nats-server/,
    );
  });

  it('without network or Go, `kubebus dev` and `npm start`/`npm test` fail in one line naming the next step', () => {
    const nowhere = {
      ...host.env(),
      KUBEBUS_ENVTEST_INDEX_URL: 'http://127.0.0.1:1/envtest-releases.yaml',
      KUBEBUS_NATS_RELEASES_URL: 'http://127.0.0.1:1/nats',
      KUBEBUS_KUBE_RELEASES_URL: 'http://127.0.0.1:1/kube',
    };
    const runs = {
      'fetch-servers': ['--import', 'tsx', 'test/bed/fetch-servers.ts'],
      'kubebus dev': [
        '--conditions=source',
        '--import',
        'tsx',
        'packages/kubebus/src/cli/main.ts',
        'dev',
        'examples/staticsite/operator.ts',
      ],
    };
    for (const [what, args] of Object.entries(runs)) {
      const run = spawnSync(process.execPath, args, {
        cwd: repo,
        env: nowhere,
        encoding: 'utf8',
        timeout: 120_000,
      });
      assert.notEqual(run.status, 0, what);
      const lines = run.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${what} printed:\n${run.stderr}`);
      assert.match(
        lines[0] ?? '',
        /^kubebus: .*no kube-apiserver.* found: the download failed: could not fetch .*, and Go is not installed; set KUBEBUS_ASSETS .*install Go >= 1\.26$/,
        what,
      );
      assert.doesNotMatch(run.stderr, /\n\s+at /, `${what} printed a stack trace`);
    }
  });
});
