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
  /** a node of a cluster: its name, its route port and every node's route port */
  readonly cluster?: { readonly node: number; readonly routePorts: readonly number[] };
}

export async function natsConfig(dir: string, options: NatsOptions = {}): Promise<NatsConfig> {
  const suffix = options.cluster === undefined ? '' : `-${options.cluster.node}`;
  const config: NatsConfig = {
    port: await freePort(),
    monitorPort: await freePort(),
    storeDir: join(dir, `jetstream${suffix}`),
    configFile: join(dir, `nats-server${suffix}.conf`),
    logFile: join(dir, `nats-server${suffix}.log`),
    env: options.env ?? {},
  };
  const cluster = options.cluster;
  const routes =
    cluster === undefined
      ? ''
      : [
          'cluster {',
          '  name: kubebus_testbed',
          `  listen: "127.0.0.1:${cluster.routePorts[cluster.node] ?? 0}"`,
          `  routes: [${cluster.routePorts.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ')}]`,
          '}',
        ].join('\n');
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
      `server_name: kubebus_testbed${suffix}`,
      `jetstream { ${jetstream.join('\n  ')} }`,
      routes,
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
    name: `nats-server-${config.port}`,
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
