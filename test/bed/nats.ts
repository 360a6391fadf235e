// nats-server with JetStream on file storage, in the test bed's directory;
// optionally with TLS on the client port, and a cluster whose routes need TLS
// and the route password (written by the generator the shipped configuration
// comes from). Monitoring stays on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ROUTES_VARIABLE,
  ROUTE_PASSWORD_VARIABLE,
  clientTlsBlock,
  clusterBlock,
  routesValue,
  type NatsTlsFiles,
} from '../../packages/kubebus/src/generate/nats-tls-config.js';
import { requireServers, serverBinary } from './binaries.js';
import { httpCall } from './http.js';
import type { NatsCredentials } from './nats-credentials.js';
import { issueNatsCert, type Ca } from './pki.js';
import { freePort } from './ports.js';
import { ServerProcess } from './process.js';

export interface NatsConfig {
  readonly port: number;
  readonly monitorPort: number;
  readonly storeDir: string;
  readonly configFile: string;
  readonly logFile: string;
  readonly env: Readonly<Record<string, string>>;
  /** the client port requires TLS */
  readonly tls: boolean;
  readonly serverName: string;
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
  /** TLS required on the client port; `verifyClients` also asks for a client certificate */
  readonly tls?: { readonly files: NatsTlsFiles; readonly verifyClients?: boolean };
  /** a cluster's routes over verified TLS, with the route user and this password */
  readonly routeSecurity?: { readonly tls: NatsTlsFiles; readonly password: string };
  /** the server's name (default kubebus_testbed, with the node's number in a cluster) */
  readonly serverName?: string;
  /** clients must log in as this one user (nats-credentials.ts) */
  readonly auth?: NatsCredentials;
  /** the JetStream store, kept elsewhere than `dir` (kubebus dev's, across runs) */
  readonly storeDir?: string;
}

export async function natsConfig(dir: string, options: NatsOptions = {}): Promise<NatsConfig> {
  const { cluster, routeSecurity } = options;
  const suffix = cluster === undefined ? '' : `-${cluster.node}`;
  const config: NatsConfig = {
    port: await freePort(),
    monitorPort: await freePort(),
    storeDir: options.storeDir ?? join(dir, `jetstream${suffix}`),
    configFile: join(dir, `nats-server${suffix}.conf`),
    logFile: join(dir, `nats-server${suffix}.log`),
    env: {
      ...options.env,
      ...options.auth?.serverEnv,
      ...(cluster === undefined || routeSecurity === undefined
        ? {}
        : routeEnvironment(cluster.routePorts, routeSecurity.password)),
    },
    tls: options.tls !== undefined,
    serverName: options.serverName ?? `kubebus_testbed${suffix}`,
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
      `server_name: ${config.serverName}`,
      ...(options.tls === undefined
        ? []
        : clientTlsBlock(options.tls.files, options.tls.verifyClients ?? false)),
      `jetstream { ${jetstream.join('\n  ')} }`,
      ...(cluster === undefined ? [] : clusterConfig(cluster, routeSecurity?.tls)),
      options.auth?.serverConfig ?? '',
      options.extraConfig ?? '',
    ].join('\n') + '\n',
  );
  return config;
}

/**
 * TLS on the client port and, for a cluster, route TLS with a route password
 * made for this run: a certificate for loopback signed by the bed's CA.
 */
export async function loopbackTls(pki: Ca): Promise<Pick<NatsOptions, 'tls' | 'routeSecurity'>> {
  const cert = await issueNatsCert(pki, 'testbed');
  const files = { cert: cert.cert, key: cert.key, ca: pki.caCert };
  return {
    tls: { files },
    routeSecurity: { tls: files, password: randomBytes(24).toString('hex') },
  };
}

/** Open routes, or the shipped block: verified TLS and the route password. */
function clusterConfig(
  cluster: NonNullable<NatsOptions['cluster']>,
  tls: NatsTlsFiles | undefined,
): string[] {
  const listen = `127.0.0.1:${cluster.routePorts[cluster.node] ?? 0}`;
  if (tls !== undefined) return clusterBlock({ name: 'kubebus_testbed', listen, tls });
  return [
    'cluster {',
    '  name: kubebus_testbed',
    `  listen: "${listen}"`,
    `  routes: [${cluster.routePorts.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ')}]`,
    '}',
  ];
}

/** The route password and the routes carrying it, as the shipped block reads them. */
function routeEnvironment(routePorts: readonly number[], password: string) {
  return {
    [ROUTE_PASSWORD_VARIABLE]: password,
    [ROUTES_VARIABLE]: routesValue(
      routePorts.map((port) => `127.0.0.1:${port}`),
      password,
    ),
  };
}

export function natsUrl(config: NatsConfig): string {
  return `${config.tls ? 'tls' : 'nats'}://127.0.0.1:${config.port}`;
}

export async function startNats(config: NatsConfig): Promise<ServerProcess> {
  // found, downloaded or built first (once), also when no test bed asked for it
  await requireServers(['nats-server']);
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
