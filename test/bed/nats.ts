// nats-server with JetStream on file storage, in the test bed's directory.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverBinary } from './binaries.js';
import { httpCall } from './http.js';
import { freePort } from './ports.js';
import { ServerProcess } from './process.js';

export interface NatsConfig {
  readonly port: number;
  readonly monitorPort: number;
  readonly storeDir: string;
  readonly configFile: string;
  readonly logFile: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface NatsOptions {
  /** Extra nats-server configuration appended to the file (accounts, authorization, limits). */
  readonly extraConfig?: string;
  /** JetStream `sync_interval`: 'always' for the durable profile (fsync every write). */
  readonly syncInterval?: string;
  /** environment of the server process (variables the configuration refers to) */
  readonly env?: Readonly<Record<string, string>>;
}

export async function natsConfig(dir: string, options: NatsOptions = {}): Promise<NatsConfig> {
  const config: NatsConfig = {
    port: await freePort(),
    monitorPort: await freePort(),
    storeDir: join(dir, 'jetstream'),
    configFile: join(dir, 'nats-server.conf'),
    logFile: join(dir, 'nats-server.log'),
    env: options.env ?? {},
  };
  mkdirSync(config.storeDir, { recursive: true });
  const jetstream = [
    `store_dir: ${JSON.stringify(config.storeDir)}`,
    'max_memory_store: 256MB',
    'max_file_store: 4GB',
    ...(options.syncInterval === undefined ? [] : [`sync_interval: ${options.syncInterval}`]),
  ];
  writeFileSync(
    config.configFile,
    [
      `listen: "127.0.0.1:${config.port}"`,
      `http: "127.0.0.1:${config.monitorPort}"`,
      `server_name: kubebus_testbed`,
      `jetstream { ${jetstream.join('\n  ')} }`,
      options.extraConfig ?? '',
    ].join('\n') + '\n',
  );
  return config;
}

export function natsUrl(config: NatsConfig): string {
  return `nats://127.0.0.1:${config.port}`;
}

export async function startNats(config: NatsConfig): Promise<ServerProcess> {
  const server = ServerProcess.start({
    name: 'nats-server',
    binary: serverBinary('nats-server'),
    logFile: config.logFile,
    args: ['-c', config.configFile],
    env: config.env,
  });
  await server.waitReady(async () => {
    const res = await httpCall(
      `http://127.0.0.1:${config.monitorPort}/healthz?js-enabled-only=true`,
    );
    return res.status === 200;
  }, 30_000);
  return server;
}
