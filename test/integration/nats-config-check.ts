// `nats-server -t` on a shipped configuration. In a pod its TLS files come
// from a mounted Secret (/etc/nats-tls); here a copy of the configuration, and
// of the cluster.conf it includes, points at test certificates instead.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { NATS_TLS_DIR } from '../../packages/kubebus/src/generate/nats-tls-config.js';
import { serverBinary } from '../bed/binaries.js';
import { createPki, issueNatsCert } from '../bed/pki.js';

/**
 * Tests `conf` with `env`; `clusterConf` stands in for the cluster.conf beside
 * it (the ha overlay's). The result is nats-server's.
 */
export async function testNatsConfig(
  conf: string,
  env: Readonly<Record<string, string>>,
  clusterConf?: string,
): Promise<SpawnSyncReturns<string>> {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-nats-conf-'));
  const certs = join(dir, 'tls');
  mkdirSync(join(dir, 'pki'));
  const pki = await createPki(join(dir, 'pki'));
  const cert = await issueNatsCert(pki, 'nats');
  mkdirSync(certs);
  copyFileSync(cert.cert, join(certs, 'tls.crt'));
  copyFileSync(cert.key, join(certs, 'tls.key'));
  copyFileSync(pki.caCert, join(certs, 'ca.crt'));
  const retarget = (file: string) => readFileSync(file, 'utf8').replaceAll(NATS_TLS_DIR, certs);
  writeFileSync(join(dir, 'nats-server.conf'), retarget(conf));
  const cluster = clusterConf ?? join(dirname(conf), 'cluster.conf');
  if (existsSync(cluster)) writeFileSync(join(dir, 'cluster.conf'), retarget(cluster));
  try {
    return spawnSync(serverBinary('nats-server'), ['-c', join(dir, 'nats-server.conf'), '-t'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
