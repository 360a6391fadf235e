// Where the test bed's servers come from, in setup-envtest's order:
// KUBEBUS_ASSETS, then PATH at a supported version, then an earlier download,
// then a download (testbed-archives.test.ts), then the Go build. The binaries
// here are small scripts that print a version, as the servers do.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pinnedVersions } from '../bed/archive-sources.js';
import { findServer, resolveServers } from '../bed/binaries.js';

function binDir(versions: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-bin-'));
  for (const [name, version] of Object.entries(versions)) {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\necho "${name}: ${version}"\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}

/** An empty cache, so that no download from an earlier run decides. */
const emptyCache = () => mkdtempSync(join(tmpdir(), 'kubebus-cache-'));

const noBuild = () => {
  throw new Error('the Go build was asked for');
};

describe('test bed binaries', () => {
  it('takes KUBEBUS_ASSETS first, and says which binary it lacks', () => {
    const assets = binDir({ 'nats-server': 'v2.12.7' });
    assert.equal(
      findServer(
        'nats-server',
        { KUBEBUS_ASSETS: assets, PATH: '', KUBEBUS_CACHE: emptyCache() },
        noBuild,
      ),
      join(assets, 'nats-server'),
    );
    assert.throws(
      () => findServer('etcd', { KUBEBUS_ASSETS: assets, PATH: '' }, noBuild),
      /KUBEBUS_ASSETS names .* which has no executable etcd/,
    );
  });

  it('takes a supported binary on PATH, passes over one too old, and builds only then', () => {
    const current = binDir({ 'kube-apiserver': 'Kubernetes v1.37.2' });
    assert.equal(
      findServer('kube-apiserver', { PATH: current, KUBEBUS_CACHE: emptyCache() }, noBuild),
      join(current, 'kube-apiserver'),
    );
    // Debian's nats-server 2.9 is older than kubebus needs (2.10): built instead
    const old = binDir({ 'nats-server': 'v2.9.10' });
    assert.equal(
      findServer('nats-server', { PATH: old, KUBEBUS_CACHE: emptyCache() }, () => '/built'),
      join('/built', 'nats-server'),
    );
  });

  it('takes an earlier download before the Go build', () => {
    const cache = emptyCache();
    const dir = join(cache, 'archives', `nats-server-${pinnedVersions().nats}-${platformSuffix()}`);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'nats-server');
    writeFileSync(path, '#!/bin/sh\necho "nats-server: v2.15.2"\n');
    chmodSync(path, 0o755);
    assert.equal(findServer('nats-server', { PATH: '', KUBEBUS_CACHE: cache }, noBuild), path);
  });

  it('takes a finished Go build only when each of its binaries prints its own pin', () => {
    const pins = pinnedVersions();
    const goBuild = (cache: string, key: string, printed: Partial<Record<string, string>>) => {
      const bin = join(cache, 'servers', key, 'bin');
      mkdirSync(bin, { recursive: true });
      const versions = {
        'kube-apiserver': `Kubernetes ${pins.kubernetes}`,
        'kube-controller-manager': `Kubernetes ${pins.kubernetes}`,
        etcd: `etcd Version: ${pins.etcd.replace(/^v/, '')}`,
        'nats-server': `nats-server: ${pins.nats}`,
        ...printed,
      };
      for (const [name, version] of Object.entries(versions)) {
        writeFileSync(join(bin, name), `#!/bin/sh\necho "${version ?? ''}"\n`);
        chmodSync(join(bin, name), 0o755);
      }
      return bin;
    };
    // a pin that is a prefix of what is printed is not the pin: 1.37.2 is not 1.37.20
    const longer = (version: string) => `${version}0`;
    const cache = emptyCache();
    goBuild(cache, 'kube-longer', { 'kube-apiserver': `Kubernetes ${longer(pins.kubernetes)}` });
    goBuild(cache, 'kcm-other', {
      'kube-controller-manager': `Kubernetes ${longer(pins.kubernetes)}`,
    });
    goBuild(cache, 'nats-other', { 'nats-server': `nats-server: ${longer(pins.nats)}` });
    goBuild(cache, 'etcd-other', { etcd: `etcd Version: ${longer(pins.etcd.replace(/^v/, ''))}` });
    assert.equal(
      findServer('nats-server', { PATH: '', KUBEBUS_CACHE: cache }, () => '/built'),
      join('/built', 'nats-server'),
    );
    const other = emptyCache();
    goBuild(other, 'kube-longer', { 'kube-apiserver': `Kubernetes ${longer(pins.kubernetes)}` });
    const pinned = goBuild(other, 'pinned', {});
    assert.equal(
      findServer('nats-server', { PATH: '', KUBEBUS_CACHE: other }, noBuild),
      join(pinned, 'nats-server'),
    );
  });

  it('with KUBEBUS_NO_DOWNLOAD=1 asks no host and goes to the Go build, saying why', async () => {
    const notes: string[] = [];
    const found = await resolveServers(
      ['etcd'],
      {
        PATH: '',
        KUBEBUS_CACHE: emptyCache(),
        KUBEBUS_NO_DOWNLOAD: '1',
        // a host that would refuse the connection, were it asked
        KUBEBUS_ENVTEST_INDEX_URL: 'http://127.0.0.1:1/envtest-releases.yaml',
      },
      { build: () => '/built', note: (line) => notes.push(line) },
    );
    assert.equal(found.get('etcd'), join('/built', 'etcd'));
    assert.deepEqual(notes, [
      'downloads are off (KUBEBUS_NO_DOWNLOAD=1); using the Go build for etcd (test/bed/servers/build.sh: minutes the first time)',
    ]);
  });

  it('without downloads or Go, says in one line what to do', async () => {
    await assert.rejects(
      resolveServers(['kube-apiserver', 'etcd'], {
        PATH: binDir({}),
        KUBEBUS_CACHE: emptyCache(),
        KUBEBUS_NO_DOWNLOAD: '1',
      }),
      (error: unknown) =>
        error instanceof Error &&
        !error.message.includes('\n') &&
        error.message ===
          'no kube-apiserver, etcd found: downloads are off (KUBEBUS_NO_DOWNLOAD=1), and Go is not installed; ' +
            'set KUBEBUS_ASSETS to a directory of them, unset KUBEBUS_NO_DOWNLOAD to download them, or install Go >= 1.26',
    );
  });
});

function platformSuffix(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return `${process.platform}-${arch}`;
}
