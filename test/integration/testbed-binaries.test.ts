// Where the test bed's servers come from, in setup-envtest's order:
// KUBEBUS_ASSETS, then PATH at a supported version, then the Go build. The
// binaries here are small scripts that print a version, as the servers do.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findServer } from '../bed/binaries.js';

function binDir(versions: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-bin-'));
  for (const [name, version] of Object.entries(versions)) {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\necho "${name}: ${version}"\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}

const noBuild = () => {
  throw new Error('the Go build was asked for');
};

describe('test bed binaries', () => {
  it('takes KUBEBUS_ASSETS first, and says which binary it lacks', () => {
    const assets = binDir({ 'nats-server': 'v2.12.7' });
    assert.equal(
      findServer('nats-server', { KUBEBUS_ASSETS: assets, PATH: '' }, noBuild),
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
      findServer('kube-apiserver', { PATH: current }, noBuild),
      join(current, 'kube-apiserver'),
    );
    // Debian's nats-server 2.9 is older than kubebus needs (2.10): built instead
    const old = binDir({ 'nats-server': 'v2.9.10' });
    assert.equal(
      findServer('nats-server', { PATH: old }, () => '/built'),
      join('/built', 'nats-server'),
    );
  });
});
