// etcd for the apiserver, plus the admin calls fault tests need (compaction).
import { join } from 'node:path';
import { serverBinary } from './binaries.js';
import { httpCall } from './http.js';
import { freePort } from './ports.js';
import { ServerProcess } from './process.js';

export interface EtcdConfig {
  readonly dataDir: string;
  readonly logFile: string;
  readonly clientPort: number;
  readonly peerPort: number;
}

export async function etcdConfig(dir: string): Promise<EtcdConfig> {
  return {
    dataDir: join(dir, 'etcd-data'),
    logFile: join(dir, 'etcd.log'),
    clientPort: await freePort(),
    peerPort: await freePort(),
  };
}

export function etcdUrl(config: EtcdConfig): string {
  return `http://127.0.0.1:${config.clientPort}`;
}

export async function startEtcd(config: EtcdConfig): Promise<ServerProcess> {
  const client = etcdUrl(config);
  const peer = `http://127.0.0.1:${config.peerPort}`;
  const server = ServerProcess.start({
    name: 'etcd',
    binary: serverBinary('etcd'),
    logFile: config.logFile,
    args: [
      '--name=testbed',
      `--data-dir=${config.dataDir}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=testbed=${peer}`,
      '--unsafe-no-fsync', // a test bed trades durability for speed
      '--log-level=warn',
    ],
  });
  await server.waitReady(async () => {
    const res = await httpCall(`${client}/health`);
    return res.status === 200 && res.body.includes('"true"');
  }, 30_000);
  return server;
}

/** Compacts etcd's history up to its current revision; returns that revision. */
export async function compactEtcd(config: EtcdConfig): Promise<number> {
  const client = etcdUrl(config);
  // Any range request reports the store's current revision in its header.
  const range = await httpCall(`${client}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
  });
  const revision = Number(
    (JSON.parse(range.body) as { header?: { revision?: string } }).header?.revision,
  );
  if (!Number.isSafeInteger(revision)) throw new Error(`etcd gave no revision: ${range.body}`);
  const compaction = await httpCall(`${client}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(revision), physical: true }),
  });
  if (compaction.status !== 200) {
    throw new Error(`etcd compaction failed (${compaction.status}): ${compaction.body}`);
  }
  return revision;
}
