// The test tools' download against a loopback host that serves what upstream
// serves, in upstream's layout: helm's `helm-<v>-<os>-<arch>.tar.gz` (holding
// `<os>-<arch>/helm`) with its `.sha256sum`, kustomize's release
// `kustomize%2F<v>/kustomize_<v>_<os>_<arch>.tar.gz` with its `checksums.txt`,
// and a Go module proxy (`<module>/@v/<version>.zip`) for the CRD files. The
// archives are made here from the tools the Go build cached and the module
// zips from the Go module cache, so what is fetched is real, and is run.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { hash1 } from '../bed/archive-dirhash.js';
import { isArchiveError } from '../bed/archive-error.js';
import { platformOf } from '../bed/archive-sources.js';
import { readZip } from '../bed/archive-zip.js';
import { escapedModule, fromModCache, moduleDir } from '../bed/tool-crds.js';
import { CRD_MODULES, pinnedTools, type CrdModule } from '../bed/tool-sources.js';
import { resolveTools, toolsBinDir } from '../bed/tools.js';
import { digestOf, startArchiveHost, tarball, type ArchiveHost } from '../support/archive-host.js';

const pins = pinnedTools();
const platform = platformOf() ?? { os: 'linux', arch: 'amd64' };
const helmName = `helm-${pins.helm}-${platform.os}-${platform.arch}.tar.gz`;
const kustomizeDir = `kustomize_${pins.kustomize}_${platform.os}_${platform.arch}`;
const kustomizeRelease = `/kustomize/kustomize%2F${pins.kustomize}`;
const repo = fileURLToPath(new URL('../..', import.meta.url));
const [eventing, serving] = CRD_MODULES as [CrdModule, CrdModule, CrdModule];
const run = promisify(execFile);
const zipPath = (module: CrdModule) =>
  `/goproxy/${escapedModule(module.module)}/@v/${module.version}.zip`;

const noBuild = () => {
  throw new Error('the Go build was asked for');
};
const quiet = () => undefined;

/** A KUBEBUS_TOOLS directory holding `tools` of the Go build's directory. */
function toolsDir(tools: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-tools-'));
  for (const [name, from] of Object.entries(tools)) symlinkSync(join(from, name), join(dir, name));
  return dir;
}
const oneLine = (error: unknown, pattern: RegExp) =>
  isArchiveError(error) &&
  error.code === 'refused' &&
  !error.message.includes('\n') &&
  pattern.test(error.message);

/** The zip Go's module cache holds for `module` (`go mod download` puts it there if needed). */
function moduleZip(module: CrdModule): { zip: string; ziphash: string } {
  const printed = execFileSync(
    'go',
    ['mod', 'download', '-json', `${module.module}@${module.version}`],
    { cwd: join(repo, 'test/bed/tools'), encoding: 'utf8' },
  );
  const { Zip, Sum } = JSON.parse(printed) as { Zip: string; Sum: string };
  return { zip: Zip, ziphash: Sum };
}

describe('test tools from a loopback release host and module proxy', () => {
  let host: ArchiveHost;
  let built: string;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: '',
    HOME: mkdtempSync(join(tmpdir(), 'kubebus-home-')),
    KUBEBUS_CACHE: mkdtempSync(join(tmpdir(), 'kubebus-cache-')),
    KUBEBUS_HELM_RELEASES_URL: `${host.url}/helm`,
    KUBEBUS_KUSTOMIZE_RELEASES_URL: `${host.url}/kustomize`,
    GOPROXY: `${host.url}/goproxy,direct`,
  });
  const archives = (environment: NodeJS.ProcessEnv) =>
    readdirSync(join(environment['KUBEBUS_CACHE'] ?? '', 'archives')).sort();

  before(async () => {
    built = toolsBinDir();
    const www = mkdtempSync(join(tmpdir(), 'kubebus-www-'));
    writeFileSync(join(www, 'LICENSE'), 'Apache-2.0\n');
    const inside = `${platform.os}-${platform.arch}`;
    const helmArchive = tarball(join(www, helmName), {
      [`${inside}/helm`]: join(built, 'helm'),
      [`${inside}/LICENSE`]: join(www, 'LICENSE'),
    });
    const kustomizeArchive = tarball(join(www, `${kustomizeDir}.tar.gz`), {
      kustomize: join(built, 'kustomize'),
    });
    host = await startArchiveHost(
      new Map<string, { file: string } | { text: string }>([
        [`/helm/${helmName}`, { file: helmArchive }],
        [
          `/helm/${helmName}.sha256sum`,
          { text: `${digestOf('sha256', helmArchive)}  ${helmName}\n` },
        ],
        [`${kustomizeRelease}/${kustomizeDir}.tar.gz`, { file: kustomizeArchive }],
        [
          `${kustomizeRelease}/checksums.txt`,
          {
            text: [
              `${'1'.repeat(64)}  kustomize_${pins.kustomize}_darwin_arm64.tar.gz`,
              `${digestOf('sha256', kustomizeArchive)}  ${kustomizeDir}.tar.gz`,
              '',
            ].join('\n'),
          },
        ],
        ...CRD_MODULES.map((module): [string, { file: string }] => [
          zipPath(module),
          { file: moduleZip(module).zip },
        ]),
      ]),
    );
  });

  after(async () => {
    await host.close();
  });

  it("computes go.sum's h1: hash of each module zip as Go does", async () => {
    for (const module of CRD_MODULES) {
      const { zip, ziphash } = moduleZip(module);
      assert.equal(hash1(await readZip(zip)), ziphash, module.module);
      assert.equal(ziphash, module.h1, `${module.module}: the pin is what Go verified`);
    }
  });

  it('downloads, verifies and caches kustomize, helm and the CRD files; composecheck falls to the Go build', async () => {
    const environment = env();
    const notes: string[] = [];
    const { tools, crds } = await resolveTools(environment, {
      build: () => built,
      note: (line) => notes.push(line),
    });
    const cache = join(environment['KUBEBUS_CACHE'] ?? '', 'archives');
    const helmDir = helmName.replace(/\.tar\.gz$/, '');
    assert.equal(tools.get('helm'), join(cache, helmDir, 'helm'));
    assert.equal(tools.get('kustomize'), join(cache, kustomizeDir, 'kustomize'));
    assert.equal(
      execFileSync(join(cache, helmDir, 'helm'), ['version', '--template', '{{.Version}}'], {
        encoding: 'utf8',
      }),
      pins.helm,
    );
    assert.match(
      execFileSync(join(cache, kustomizeDir, 'kustomize'), ['version'], { encoding: 'utf8' }),
      new RegExp(`^${pins.kustomize.replace(/\./g, '\\.')}$`, 'm'),
    );
    // only the binary is kept out of each archive
    assert.deepEqual(readdirSync(join(cache, helmDir)), ['helm']);
    // no Docker Compose here (PATH is empty) and no published composecheck: the Go build, said once
    assert.equal(tools.get('composecheck'), join(built, 'composecheck'));
    assert.deepEqual(
      notes.filter((line) => !/^download(ing|ed) /.test(line)),
      [
        'Docker Compose v2 (`docker compose`) is not installed; using the Go build for composecheck (test/bed/tools/build.sh: minutes the first time)',
      ],
    );
    assert.deepEqual(
      notes.filter((line) => line.startsWith('downloaded ')),
      CRD_MODULES.map(
        (module) =>
          `downloaded ${module.module}@${module.version} from ${new URL(host.url).host}, its h1: checked`,
      ),
    );
    // the CRD files are the modules' own bytes
    const knative = crds.get('knative') ?? [];
    assert.deepEqual(
      knative.map((path) => path.split('/').at(-1)),
      ['apiserversource.yaml', 'broker.yaml', 'trigger.yaml', 'service.yaml'],
    );
    const zip = await readZip(moduleZip(eventing).zip);
    assert.deepEqual(
      readFileSync(knative[2] ?? ''),
      zip.read(`${eventing.module}@${eventing.version}/config/core/resources/trigger.yaml`),
    );
    assert.match(readFileSync(knative[2] ?? '', 'utf8'), /kind: CustomResourceDefinition/);
    assert.equal(crds.get('prometheus-operator')?.length, 2);

    // a second resolution, in a fresh process, takes the cache and asks the host nothing
    const asked = host.requests.length;
    const again = spawnSync(process.execPath, ['--import', 'tsx', 'test/bed/fetch-tools.ts'], {
      cwd: repo,
      env: { ...environment, KUBEBUS_TOOLS: toolsDir({ composecheck: built }) },
      encoding: 'utf8',
    });
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`^kubebus: helm ${cache}/${helmDir}/helm$`, 'm'));
    assert.equal(host.requests.length, asked);
  });

  it('refuses a checksum mismatch in one line and caches nothing of it', async () => {
    const environment = env();
    const real = host.routes.get(`/helm/${helmName}.sha256sum`);
    host.routes.set(`/helm/${helmName}.sha256sum`, {
      text: `${createHash('sha256').update('a swapped archive').digest('hex')}  ${helmName}\n`,
    });
    try {
      await assert.rejects(
        resolveTools(environment, { build: noBuild, note: quiet }),
        (error: unknown) =>
          oneLine(
            error,
            new RegExp(
              `^checksum mismatch for ${helmName.replace(/\./g, '\\.')} .*is not the published .*KUBEBUS_NO_DOWNLOAD=1`,
            ),
          ),
      );
    } finally {
      if (real !== undefined) host.routes.set(`/helm/${helmName}.sha256sum`, real);
    }
    assert.ok(!archives(environment).some((entry) => entry.startsWith('helm')), 'helm was cached');
  });

  it('refuses a module zip whose h1: is not the pinned one, and one that is damaged, in one line', async () => {
    const tools = { KUBEBUS_TOOLS: built };
    const real = host.routes.get(zipPath(serving));
    // a mirror serving another module's bytes under serving's name
    host.routes.set(zipPath(serving), { file: moduleZip(eventing).zip });
    try {
      const environment = { ...env(), ...tools };
      await assert.rejects(
        resolveTools(environment, { build: noBuild, note: quiet }),
        (error: unknown) =>
          oneLine(
            error,
            new RegExp(
              `^checksum mismatch for knative\\.dev/serving@v0\\.45\\.0 from http://127\\.0\\.0\\.1:\\d+/goproxy/.*: h1:\\S+ is not the pinned ${serving.h1.replace(/[+]/g, '\\+')} \\(go\\.sum's hash\\): .*GOPROXY`,
            ),
          ),
      );
      assert.ok(!archives(environment).some((entry) => entry.includes('serving')));
      // the real zip cut short
      const cut = join(mkdtempSync(join(tmpdir(), 'kubebus-www-')), 'cut.zip');
      writeFileSync(cut, readFileSync(moduleZip(serving).zip).subarray(0, 1024 * 1024));
      host.routes.set(zipPath(serving), { file: cut });
      await assert.rejects(
        resolveTools({ ...env(), ...tools }, { build: noBuild, note: quiet }),
        (error: unknown) =>
          oneLine(
            error,
            /^knative\.dev\/serving@v0\.45\.0 from .* is not a readable module zip \(no end of central directory/,
          ),
      );
    } finally {
      if (real !== undefined) host.routes.set(zipPath(serving), real);
    }
  });

  it("with KUBEBUS_SERVER_SUMS takes the archives' digests from that file alone", async () => {
    const archive = (path: string) => {
      const route = host.routes.get(path);
      assert.ok(route !== undefined && 'file' in route);
      return route.file;
    };
    const sums = join(mkdtempSync(join(tmpdir(), 'kubebus-sums-')), 'SUMS');
    writeFileSync(
      sums,
      [
        `${digestOf('sha256', archive(`/helm/${helmName}`))}  ${helmName}`,
        `${digestOf('sha256', archive(`${kustomizeRelease}/${kustomizeDir}.tar.gz`))}  ${kustomizeDir}.tar.gz`,
        '',
      ].join('\n'),
    );
    host.requests.length = 0;
    const { tools } = await resolveTools(
      { ...env(), KUBEBUS_SERVER_SUMS: sums },
      { build: () => built, note: quiet },
    );
    assert.match(tools.get('helm') ?? '', /archives\/helm-/);
    assert.match(tools.get('kustomize') ?? '', /archives\/kustomize_/);
    // the host's own lists are never asked for
    assert.deepEqual(
      host.requests.filter((path) => path.endsWith('.sha256sum') || path.endsWith('checksums.txt')),
      [],
    );
    // an archive the file does not list is refused, not fetched unchecked
    writeFileSync(sums, `${digestOf('sha256', archive(`/helm/${helmName}`))}  ${helmName}\n`);
    await assert.rejects(
      resolveTools({ ...env(), KUBEBUS_SERVER_SUMS: sums }, { build: noBuild, note: quiet }),
      (error: unknown) =>
        oneLine(
          error,
          new RegExp(
            `lists no digest for ${kustomizeDir}\\.tar\\.gz: add its vetted sha256 or sha512, or unset KUBEBUS_SERVER_SUMS$`,
          ),
        ),
    );
  });

  it('with the hosts unreachable: kustomize and helm from the Go build, the CRDs from the Go module cache, each said', async () => {
    const nowhere = 'http://127.0.0.1:1';
    const environment = {
      ...env(),
      KUBEBUS_HELM_RELEASES_URL: `${nowhere}/helm`,
      KUBEBUS_KUSTOMIZE_RELEASES_URL: `${nowhere}/kustomize`,
      GOPROXY: `${nowhere}/goproxy`,
      GOMODCACHE: moduleZip(eventing).zip.replace(/\/cache\/download\/.*$/, ''),
    };
    const notes: string[] = [];
    const { tools, crds } = await resolveTools(environment, {
      build: () => built,
      note: (line) => notes.push(line),
    });
    assert.equal(tools.get('helm'), join(built, 'helm'));
    assert.equal(tools.get('kustomize'), join(built, 'kustomize'));
    assert.equal(notes.length, 1 + CRD_MODULES.length, notes.join('\n'));
    assert.match(
      notes[0] ?? '',
      /^the download failed: could not fetch http:\/\/127\.0\.0\.1:1\/.*; Docker Compose v2 .* is not installed; using the Go build for kustomize, helm, composecheck/,
    );
    assert.deepEqual(
      notes.slice(1),
      CRD_MODULES.map(
        (module) =>
          `took ${module.module}@${module.version} from the Go module cache, its h1: checked`,
      ),
    );
    assert.equal(crds.get('knative')?.length, 4);
  });

  it('takes a module zip the Go module cache holds before asking the module proxy', async () => {
    host.requests.length = 0;
    const notes: string[] = [];
    const { crds } = await resolveTools(
      {
        ...env(),
        KUBEBUS_TOOLS: built,
        GOMODCACHE: moduleZip(eventing).zip.replace(/\/cache\/download\/.*$/, ''),
      },
      { build: noBuild, note: (line) => notes.push(line) },
    );
    assert.equal(crds.get('knative')?.length, 4);
    assert.deepEqual(
      host.requests.filter((path) => path.startsWith('/goproxy/')),
      [],
    );
    assert.deepEqual(
      notes,
      CRD_MODULES.map(
        (module) =>
          `took ${module.module}@${module.version} from the Go module cache, its h1: checked`,
      ),
    );
  });

  it('keeps GOPROXY credentials out of every line, sends them as Basic auth, and passes over a proxy it cannot use', async () => {
    host.authorizations.length = 0;
    const notes: string[] = [];
    const { crds } = await resolveTools(
      {
        ...env(),
        KUBEBUS_TOOLS: built,
        GOPROXY: `${host.url.replace('http://', 'http://u:secret@')}/goproxy,direct`,
      },
      { build: noBuild, note: (line) => notes.push(line) },
    );
    assert.equal(crds.get('knative')?.length, 4);
    assert.deepEqual(
      [...new Set(host.authorizations)],
      [`Basic ${Buffer.from('u:secret').toString('base64')}`],
    );
    assert.ok(!notes.join('\n').includes('secret'), notes.join('\n'));
    // unreachable, not https, file: each passed over to the next source (here: none is left)
    for (const [goproxy, why] of [
      [
        'https://u:secret@127.0.0.1:1/goproxy',
        'the download failed: could not fetch https://127\\.0\\.0\\.1:1/goproxy/knative\\.dev/eventing/@v/v0\\.45\\.0\\.zip \\(',
      ],
      [
        'http://u:secret@goproxy.example/',
        "the download failed: GOPROXY's http://goproxy\\.example is not an https URL \\(plain http only on loopback\\), so it is passed over",
      ],
      [
        'file:///srv/goproxy',
        "the download failed: GOPROXY's file:///srv/goproxy is not an https URL",
      ],
    ] as const) {
      const fetched = spawnSync(
        process.execPath,
        ['--import', 'tsx', 'test/bed/fetch-tools.ts', 'crds'],
        { cwd: repo, env: { ...env(), GOPROXY: goproxy }, encoding: 'utf8', timeout: 120_000 },
      );
      assert.equal(fetched.status, 1, fetched.stderr);
      assert.ok(!fetched.stderr.includes('secret'), fetched.stderr);
      assert.match(
        fetched.stderr,
        new RegExp(
          `^kubebus: no knative\\.dev/eventing@v0\\.45\\.0 \\(the knative CRDs\\): ${why}.*, no Go module cache holds it, and Go is not installed; .*\\n$`,
        ),
      );
    }
  });

  it('keeps each module pin in its own cache folder: another file list at the same version is fetched anew', async () => {
    const archivesDir = join(mkdtempSync(join(tmpdir(), 'kubebus-cache-')), 'archives');
    const { zip } = moduleZip(eventing);
    // an earlier pin of the same version that took one file fewer
    const earlier: CrdModule = { ...eventing, files: new Map([...eventing.files].slice(1)) };
    await fromModCache(earlier, zip, archivesDir);
    await fromModCache(eventing, zip, archivesDir);
    assert.notEqual(moduleDir(archivesDir, earlier), moduleDir(archivesDir, eventing));
    for (const name of eventing.files.values())
      assert.ok(existsSync(join(moduleDir(archivesDir, eventing), name)), name);
  });

  it('gives a test the tool or the CRD files it needs when another cannot be had', async () => {
    // no Docker Compose and no Go here: composecheck cannot be had, kustomize and the CRDs can
    const script = [
      "const { toolBinary, crdFiles } = await import('./test/bed/tools.ts');",
      "process.stdout.write(JSON.stringify([toolBinary('kustomize'), crdFiles('knative').length]));",
    ].join('\n');
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: repo, env: env(), encoding: 'utf8', timeout: 120_000 },
    );
    const [kustomize, knative] = JSON.parse(stdout) as [string, number];
    assert.match(kustomize, new RegExp(`/archives/${kustomizeDir}/kustomize$`));
    assert.equal(knative, 4);
  });

  it('without network, a module cache or Go, `npm test` fails in one line naming the next step', () => {
    const nowhere = 'http://127.0.0.1:1';
    const run = (extra: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'test/bed/fetch-tools.ts'], {
        cwd: repo,
        env: {
          ...env(),
          KUBEBUS_HELM_RELEASES_URL: `${nowhere}/helm`,
          KUBEBUS_KUSTOMIZE_RELEASES_URL: `${nowhere}/kustomize`,
          GOPROXY: `${nowhere}/goproxy`,
          ...extra,
        },
        encoding: 'utf8',
        timeout: 120_000,
      });
    const tools = run({});
    assert.equal(tools.status, 1);
    assert.match(
      tools.stderr,
      /^kubebus: no kustomize, helm, composecheck found: the download failed: could not fetch .*; Docker Compose v2 .*, and Go is not installed; set KUBEBUS_TOOLS to a directory holding them, point KUBEBUS_HELM_RELEASES_URL and KUBEBUS_KUSTOMIZE_RELEASES_URL at a mirror, install Docker Compose v2, or install Go >= 1\.26\n$/,
    );
    const compose = run({ KUBEBUS_TOOLS: toolsDir({ kustomize: built, helm: built }) });
    assert.equal(compose.status, 1);
    assert.match(
      compose.stderr,
      /^kubebus: no composecheck found: Docker Compose v2 \(`docker compose`\) is not installed, and Go is not installed; install Docker Compose v2, or install Go >= 1\.26\n$/,
    );
    const modules = run({ KUBEBUS_TOOLS: built });
    assert.equal(modules.status, 1);
    assert.match(
      modules.stderr,
      /^kubebus: no knative\.dev\/eventing@v0\.45\.0 \(the knative CRDs\): the download failed: could not fetch .*, no Go module cache holds it, and Go is not installed; set GOPROXY to a reachable module proxy, or install Go >= 1\.26\n$/,
    );
  });
});
