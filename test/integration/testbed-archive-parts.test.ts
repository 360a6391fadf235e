// The pure parts of the prebuilt-server download: the upstream checksum lists
// parsed as setup-envtest and goreleaser write them, the pinned versions read
// from the Go build's go.mod, URLs refused unless https (or loopback), digests
// compared, and a .tar.gz read member by member without trusting its names.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
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
import { readVettedSums, vettedDigest } from '../bed/archive-sums.js';
import { extractMembers, TarError } from '../bed/archive-tar.js';
import { namesVersion, pinOf } from '../bed/server-version.js';

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

  it('matches a version whole: v1.37.2 is not v1.37.20, 1.37.2.1 or v1.37.2-rc.0', () => {
    assert.ok(namesVersion('Kubernetes v1.37.2\n', 'v1.37.2'));
    assert.ok(namesVersion('etcd Version: 3.7.0\nGit SHA: x', 'v3.7.0'));
    assert.ok(namesVersion('nats-server: v2.15.2', 'v2.15.2'));
    assert.ok(namesVersion('etcd Version: 3.6.5', undefined));
    for (const printed of [
      'Kubernetes v1.37.20',
      'Kubernetes v1.37.2.1',
      'Kubernetes v1.37.2-rc.0',
      'Kubernetes v1.37.2+dirty',
      'Kubernetes v11.37.2',
      'Kubernetes v0.0.0-master',
    ])
      assert.equal(namesVersion(printed, 'v1.37.2'), false, printed);
    assert.equal(namesVersion('etcd Version: unknown', undefined), false);
    // each server against its own pin
    const pins = { kubernetes: 'v1.37.2', etcd: 'v3.7.0', nats: 'v2.15.2' };
    assert.equal(pinOf('kube-controller-manager', pins), 'v1.37.2');
    assert.equal(pinOf('etcd', pins), 'v3.7.0');
    assert.equal(pinOf('nats-server', pins), 'v2.15.2');
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

describe('prebuilt server archives: vetted digests (KUBEBUS_SERVER_SUMS)', () => {
  it('reads sha256 and sha512 lines, and refuses a file it cannot read or a name it lacks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubebus-sums-'));
    const file = join(dir, 'SUMS');
    writeFileSync(
      file,
      `${sha512('envtest')} envtest-v1.37.2-linux-amd64.tar.gz\n` +
        `${sha256('kcm')}  v1.37.2/bin/linux/amd64/kube-controller-manager\n` +
        `${sha256('old kcm')}  kube-controller-manager\n`,
    );
    const vetted = readVettedSums(file);
    assert.deepEqual(vettedDigest(vetted, ['envtest-v1.37.2-linux-amd64.tar.gz']), {
      algorithm: 'sha512',
      digest: sha512('envtest'),
    });
    // the path is asked for first, the bare name after it
    assert.deepEqual(
      vettedDigest(vetted, [
        'v1.37.2/bin/linux/amd64/kube-controller-manager',
        'kube-controller-manager',
      ]),
      { algorithm: 'sha256', digest: sha256('kcm') },
    );
    assert.throws(
      () => vettedDigest(vetted, ['nats-server-v2.15.2-linux-amd64.tar.gz']),
      (error: unknown) =>
        error instanceof ArchiveError &&
        error.code === 'refused' &&
        !error.message.includes('\n') &&
        /lists no digest for nats-server-v2\.15\.2-linux-amd64\.tar\.gz: add its vetted/.test(
          error.message,
        ),
    );
    assert.throws(
      () => readVettedSums(join(dir, 'absent')),
      (error: unknown) =>
        error instanceof ArchiveError &&
        error.code === 'refused' &&
        /^KUBEBUS_SERVER_SUMS=.*absent cannot be read \(.*ENOENT.*\): fix the path, or unset it$/.test(
          error.message,
        ),
    );
    assert.equal(downloadSettings({ KUBEBUS_SERVER_SUMS: file }).sumsFile, file);
    assert.equal(downloadSettings({ KUBEBUS_SERVER_SUMS: '' }).sumsFile, undefined);
  });
});

/** One ustar header block: `type` 0 a file, 1 a hard link, 2 a symlink. */
function tarHeader(name: string, size: number, type: '0' | '1' | '2', link = ''): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, 'utf8');
  header.write('0000755\0', 100, 'ascii');
  header.write('0000000\0', 108, 'ascii');
  header.write('0000000\0', 116, 'ascii');
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  header.write('00000000000\0', 136, 'ascii');
  header.write(type, 156, 'ascii');
  header.write(link, 157, 100, 'utf8');
  header.write('ustar\0' + '00', 257, 'ascii');
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

/** A .tar.gz of hand-made members, for what no well-behaved tar writes. */
function craftedTarball(
  members: { name: string; type: '0' | '1' | '2'; content?: string; link?: string }[],
): string {
  const blocks: Buffer[] = [];
  for (const member of members) {
    const content = Buffer.from(member.content ?? '');
    blocks.push(tarHeader(member.name, content.length, member.type, member.link));
    blocks.push(content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  const archive = join(mkdtempSync(join(tmpdir(), 'kubebus-crafted-')), 'a.tar.gz');
  writeFileSync(archive, gzipSync(Buffer.concat(blocks)));
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

  it('follows no link and writes nothing outside its target, whatever a member is called', async () => {
    const wantedName = 'controller-tools/envtest/kube-apiserver';
    const home = mkdtempSync(join(tmpdir(), 'kubebus-home-'));
    const out = join(home, 'out');
    mkdirSync(out);
    const victim = join(home, 'victim');
    writeFileSync(victim, 'untouched');
    const archive = craftedTarball([
      // links carrying the wanted name: extracted, they would point at the victim
      { name: wantedName, type: '2', link: victim },
      { name: `./${wantedName}`, type: '1', link: victim },
      // names that climb out of the target
      { name: `../${wantedName}`, type: '0', content: 'escaped' },
      { name: `controller-tools/../../${wantedName}`, type: '0', content: 'escaped' },
      { name: `/${wantedName}`, type: '0', content: 'escaped' },
    ]);
    const found = await extractMembers(
      archive,
      new Map([[wantedName, join(out, 'kube-apiserver')]]),
    );
    assert.deepEqual([...found], []);
    assert.deepEqual(readdirSync(out), []);
    assert.deepEqual(readdirSync(home).sort(), ['out', 'victim']);
    assert.equal(readFileSync(victim, 'utf8'), 'untouched');
  });

  it('writes a regular member that follows a link of the same name as a file, not through the link', async () => {
    const wantedName = 'nats-server-v2.15.2-linux-amd64/nats-server';
    const home = mkdtempSync(join(tmpdir(), 'kubebus-home-'));
    const victim = join(home, 'victim');
    writeFileSync(victim, 'untouched');
    const archive = craftedTarball([
      { name: wantedName, type: '2', link: victim },
      { name: wantedName, type: '0', content: 'nats bytes' },
    ]);
    const destination = join(home, 'nats-server');
    assert.deepEqual(
      [...(await extractMembers(archive, new Map([[wantedName, destination]])))],
      [wantedName],
    );
    assert.ok(lstatSync(destination).isFile());
    assert.equal(readFileSync(destination, 'utf8'), 'nats bytes');
    assert.equal(readFileSync(victim, 'utf8'), 'untouched');
  });

  it('refuses to write where something already is, a planted link included', async () => {
    const home = mkdtempSync(join(tmpdir(), 'kubebus-home-'));
    const archive = craftedTarball([{ name: 'etcd', type: '0', content: 'etcd bytes' }]);
    writeFileSync(join(home, 'etcd'), 'already here');
    await assert.rejects(
      extractMembers(archive, new Map([['etcd', join(home, 'etcd')]])),
      /EEXIST/,
    );
    assert.equal(readFileSync(join(home, 'etcd'), 'utf8'), 'already here');
  });

  it('fails, not hangs, when the archive cannot be read', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'kubebus-none-')), 'absent.tar.gz');
    await assert.rejects(extractMembers(missing, new Map([['a', `${missing}.out`]])), /ENOENT/);
    assert.equal(existsSync(`${missing}.out`), false);
  });
});
