// The pure parts of the prebuilt-server download: the upstream checksum lists
// parsed as setup-envtest and goreleaser write them, the pinned versions read
// from the Go build's go.mod, URLs refused unless https (or loopback), digests
// compared, and a .tar.gz read member by member without trusting its names.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { sameDigest } from '../bed/archive-download.js';
import { ArchiveError } from '../bed/archive-error.js';
import {
  findEnvtestArchive,
  findNatsArchive,
  parseChecksums,
  parseDigestFile,
  safeUrl,
} from '../bed/archive-index.js';
import {
  DEFAULT_ENVTEST_INDEX_URL,
  downloadSettings,
  pinnedVersions,
  platformOf,
  requiredVersion,
} from '../bed/archive-sources.js';
import { extractMembers, TarError } from '../bed/archive-tar.js';

const linux = { os: 'linux', arch: 'amd64' } as const;
const sha512 = (text: string) => createHash('sha512').update(text).digest('hex');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

// the shape of controller-tools' envtest-releases.yaml
const INDEX = `releases:
  v1.36.2:
    envtest-v1.36.2-linux-amd64.tar.gz:
      hash: ${sha512('old')}
      selfLink: https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v1.36.2/envtest-v1.36.2-linux-amd64.tar.gz
  v1.37.2:
    envtest-v1.37.2-darwin-arm64.tar.gz:
      hash: ${sha512('darwin')}
      selfLink: https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v1.37.2/envtest-v1.37.2-darwin-arm64.tar.gz
    envtest-v1.37.2-linux-amd64.tar.gz:
      hash: ${sha512('linux').toUpperCase()}
      selfLink: envtest-v1.37.2-linux-amd64.tar.gz
`;
const INDEX_URL = 'https://mirror.example/envtest/envtest-releases.yaml';

describe('prebuilt server archives: the listings', () => {
  it('finds the pinned archive for this platform in an envtest index, relative links resolved', () => {
    assert.deepEqual(findEnvtestArchive(INDEX, INDEX_URL, 'v1.37.2', linux), {
      name: 'envtest-v1.37.2-linux-amd64.tar.gz',
      url: 'https://mirror.example/envtest/envtest-v1.37.2-linux-amd64.tar.gz',
      algorithm: 'sha512',
      digest: sha512('linux'),
    });
    assert.equal(
      findEnvtestArchive(INDEX, INDEX_URL, 'v1.37.2', { os: 'darwin', arch: 'arm64' }).url,
      'https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v1.37.2/envtest-v1.37.2-darwin-arm64.tar.gz',
    );
  });

  it('says a version is not listed (unavailable) and refuses a broken index', () => {
    assert.throws(
      () => findEnvtestArchive(INDEX, INDEX_URL, 'v1.38.0', linux),
      (error: unknown) =>
        error instanceof ArchiveError &&
        error.code === 'unavailable' &&
        /lists no envtest-v1\.38\.0-linux-amd64\.tar\.gz/.test(error.message),
    );
    assert.throws(
      () => findEnvtestArchive('<html>rate limited</html>', INDEX_URL, 'v1.37.2', linux),
      (error: unknown) =>
        error instanceof ArchiveError &&
        error.code === 'refused' &&
        /is not an envtest index.*KUBEBUS_ENVTEST_INDEX_URL/.test(error.message),
    );
    const weak = INDEX.replace(sha512('linux').toUpperCase(), 'abc123');
    assert.throws(
      () => findEnvtestArchive(weak, INDEX_URL, 'v1.37.2', linux),
      (error: unknown) => error instanceof ArchiveError && error.code === 'refused',
    );
    const plain = INDEX.replace(
      'selfLink: envtest-v1.37.2-linux-amd64.tar.gz',
      'selfLink: http://mirror.example/envtest-v1.37.2-linux-amd64.tar.gz',
    );
    assert.throws(
      () => findEnvtestArchive(plain, INDEX_URL, 'v1.37.2', linux),
      /without a sha512 hash or an https selfLink/,
    );
  });

  it('reads a goreleaser SHA256SUMS and finds the nats-server archive beside it', () => {
    const sums = [
      `${sha256('zip')}  nats-server-v2.15.2-linux-amd64.zip`,
      `${sha256('tgz')}  nats-server-v2.15.2-linux-amd64.tar.gz`,
      `${sha256('bin')} *nats-server-v2.15.2-darwin-arm64.tar.gz`,
      'not a checksum line',
      '',
    ].join('\n');
    assert.equal(parseChecksums(sums).size, 3);
    assert.equal(
      parseChecksums(sums).get('nats-server-v2.15.2-darwin-arm64.tar.gz'),
      sha256('bin'),
    );
    const base = 'https://github.com/nats-io/nats-server/releases/download/v2.15.2/SHA256SUMS';
    assert.deepEqual(findNatsArchive(sums, base, 'v2.15.2', linux), {
      name: 'nats-server-v2.15.2-linux-amd64.tar.gz',
      url: 'https://github.com/nats-io/nats-server/releases/download/v2.15.2/nats-server-v2.15.2-linux-amd64.tar.gz',
      algorithm: 'sha256',
      digest: sha256('tgz'),
    });
    assert.throws(
      () => findNatsArchive(sums, base, 'v2.15.2', { os: 'linux', arch: 'arm64' }),
      (error: unknown) => error instanceof ArchiveError && error.code === 'unavailable',
    );
  });

  it("reads dl.k8s.io's one-digest files", () => {
    assert.equal(parseDigestFile(`${sha256('kcm')}\n`, 'sha256'), sha256('kcm'));
    assert.equal(
      parseDigestFile(`${sha256('kcm')}  kube-controller-manager`, 'sha256'),
      sha256('kcm'),
    );
    assert.equal(parseDigestFile('<?xml NoSuchKey', 'sha256'), undefined);
    assert.equal(parseDigestFile(sha512('kcm'), 'sha256'), undefined);
  });
});

describe('prebuilt server archives: versions, URLs, digests', () => {
  it('pins what the Go build builds, read from its go.mod files', () => {
    const kubeMod = readFileSync(new URL('../bed/servers/kube/go.mod', import.meta.url), 'utf8');
    const natsMod = readFileSync(new URL('../bed/servers/nats/go.mod', import.meta.url), 'utf8');
    const pinned = pinnedVersions();
    assert.match(
      kubeMod,
      new RegExp(`k8s\\.io/kubernetes ${pinned.kubernetes.replace(/\./g, '\\.')}\\b`),
    );
    assert.match(
      kubeMod,
      new RegExp(`go\\.etcd\\.io/etcd/server/v3 ${pinned.etcd.replace(/\./g, '\\.')}\\b`),
    );
    assert.match(natsMod, new RegExp(`nats-server/v2 ${pinned.nats.replace(/\./g, '\\.')}\\b`));
    // a replace line or a bare tool line is not a requirement
    const mod =
      'replace (\n\tk8s.io/api => k8s.io/api v0.37.2\n)\ntool k8s.io/api\nrequire k8s.io/api v0.36.0\n';
    assert.equal(requiredVersion(mod, 'k8s.io/api'), 'v0.36.0');
    assert.equal(requiredVersion('module x\n', 'k8s.io/api'), undefined);
  });

  it('names the platform as the archives do, and none where nothing is published', () => {
    assert.deepEqual(platformOf('linux', 'x64'), { os: 'linux', arch: 'amd64' });
    assert.deepEqual(platformOf('darwin', 'arm64'), { os: 'darwin', arch: 'arm64' });
    assert.equal(platformOf('win32', 'x64'), undefined);
    assert.equal(platformOf('linux', 'ia32'), undefined);
  });

  it('takes its URLs and cache from the environment, with the upstream defaults', () => {
    const defaults = downloadSettings({ HOME: '/home/u' });
    assert.equal(defaults.enabled, true);
    assert.equal(defaults.envtestIndexUrl, DEFAULT_ENVTEST_INDEX_URL);
    assert.equal(defaults.archivesDir, '/home/u/.cache/kubebus/archives');
    const mirrored = downloadSettings({
      KUBEBUS_NO_DOWNLOAD: '1',
      KUBEBUS_CACHE: '/cache',
      KUBEBUS_NATS_RELEASES_URL: 'https://mirror/nats/',
    });
    assert.equal(mirrored.enabled, false);
    assert.equal(mirrored.archivesDir, '/cache/archives');
    assert.equal(mirrored.natsReleasesUrl, 'https://mirror/nats');
  });

  it('accepts https anywhere and plain http only on loopback', () => {
    assert.ok(safeUrl('https://dl.k8s.io/v1.37.2'));
    assert.ok(safeUrl('http://127.0.0.1:8080/index.yaml'));
    assert.ok(safeUrl('http://localhost/x'));
    assert.equal(safeUrl('http://mirror.example/x'), undefined);
    assert.equal(safeUrl('file:///etc/passwd'), undefined);
    assert.equal(safeUrl('not a url'), undefined);
  });

  it('compares digests whole, in any case', () => {
    assert.ok(sameDigest(sha256('a'), sha256('a').toUpperCase()));
    assert.equal(sameDigest(sha256('a'), sha256('b')), false);
    assert.equal(sameDigest(sha256('a'), sha256('a').slice(0, 32)), false);
  });
});

/** A .tar.gz of `files` (archive path → content) made by the system's tar, as upstream's are. */
function tarball(files: Record<string, string>, format: 'gnu' | 'pax' = 'gnu'): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-tar-'));
  const root = join(dir, 'root');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const archive = join(dir, 'a.tar.gz');
  execFileSync('tar', [`--format=${format}`, '-czf', archive, '-C', root, ...Object.keys(files)]);
  return archive;
}

describe('prebuilt server archives: reading a .tar.gz', () => {
  it('writes only the members asked for, to the paths chosen, long names included', async () => {
    const long = `controller-tools/${'deep/'.repeat(30)}etcd`;
    const archive = tarball({
      'controller-tools/envtest/kube-apiserver': 'apiserver bytes',
      [long]: 'etcd bytes',
      'controller-tools/envtest/other': 'not wanted',
    });
    const out = mkdtempSync(join(tmpdir(), 'kubebus-out-'));
    const found = await extractMembers(
      archive,
      new Map([
        ['controller-tools/envtest/kube-apiserver', join(out, 'kube-apiserver')],
        [long, join(out, 'etcd')],
        ['controller-tools/envtest/kubectl', join(out, 'kubectl')],
      ]),
    );
    assert.deepEqual([...found].sort(), ['controller-tools/envtest/kube-apiserver', long].sort());
    assert.equal(readFileSync(join(out, 'kube-apiserver'), 'utf8'), 'apiserver bytes');
    assert.equal(readFileSync(join(out, 'etcd'), 'utf8'), 'etcd bytes');
  });

  it('reads the long names of a pax archive too', async () => {
    const long = `nats-server-v2.15.2-linux-amd64/${'x'.repeat(120)}/nats-server`;
    const archive = tarball({ [long]: 'nats bytes' }, 'pax');
    const out = mkdtempSync(join(tmpdir(), 'kubebus-out-'));
    const found = await extractMembers(archive, new Map([[long, join(out, 'nats-server')]]));
    assert.deepEqual([...found], [long]);
    assert.equal(readFileSync(join(out, 'nats-server'), 'utf8'), 'nats bytes');
  });

  it('refuses a damaged header, a truncated file and bytes that are not gzip', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kubebus-out-'));
    const wanted = new Map([['a', join(out, 'a')]]);
    const raw = execFileSync('gzip', ['-dc', tarball({ a: 'x'.repeat(5000) })]);
    const dir = mkdtempSync(join(tmpdir(), 'kubebus-bad-'));

    const damaged = Buffer.from(raw);
    damaged[10] = (damaged[10] ?? 0) ^ 0xff; // inside the first member's name
    writeFileSync(join(dir, 'damaged.tar.gz'), gzipSync(damaged));
    await assert.rejects(extractMembers(join(dir, 'damaged.tar.gz'), wanted), TarError);

    writeFileSync(join(dir, 'short.tar.gz'), gzipSync(raw.subarray(0, 512 + 1000)));
    await assert.rejects(
      extractMembers(join(dir, 'short.tar.gz'), new Map([['a', join(out, 'b')]])),
      /ends in the middle of a file/,
    );

    writeFileSync(join(dir, 'plain.tar.gz'), 'this is not gzip');
    await assert.rejects(extractMembers(join(dir, 'plain.tar.gz'), wanted), /header/);
  });
});
