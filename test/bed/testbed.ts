// The test bed: real etcd, kube-apiserver (and optionally kube-controller-manager)
// and nats-server on free loopback ports in a temporary directory, like
// controller-runtime's envtest. Everything it starts, it stops.
import type * as ClientNode from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adminTls,
  apiserverConfig,
  apiserverUrl,
  startApiserver,
  type ApiserverConfig,
} from './apiserver.js';
import { requireServers } from './binaries.js';
import { httpCall } from './http.js';
import { freePort } from './ports.js';
import { startControllerManager } from './controller-manager.js';
import { compactEtcd, etcdConfig, etcdUrl, startEtcd, type EtcdConfig } from './etcd.js';
import { writeKubeconfig, writeTokenKubeconfig } from './kubeconfig.js';
import {
  loopbackTls,
  natsConfig,
  natsUrl,
  startNats,
  type NatsConfig,
  type NatsOptions,
} from './nats.js';
import { loopbackCredentials } from './nats-credentials.js';
import { createPki, issueClientCert, type Pki } from './pki.js';
import type { ServerProcess } from './process.js';

export interface TestBedOptions {
  /** Also run kube-controller-manager (garbage collection of owned objects). */
  readonly controllerManager?: boolean;
  readonly nats?: NatsOptions;
  /** run a NATS cluster of this many nodes (routes on loopback) instead of one server */
  readonly natsNodes?: number;
  /** NATS requires TLS (a certificate from the bed's CA, pki.caCert); routes need TLS and a password */
  readonly natsTls?: boolean;
  /** NATS requires its one user, with a password made for this run (natsClientEnv names both) */
  readonly natsAuth?: boolean;
  readonly apiserverArgs?: readonly string[];
  /** Keep the directory (logs, data) after stop, for a person to read. */
  readonly keepDir?: boolean;
}

export class TestBed {
  readonly #servers = new Map<string, ServerProcess>();
  /** the last kube-controller-manager restart asked for (restartControllerManager) */
  #kcmRestart: Promise<void> = Promise.resolve();
  #stopping = false;

  private constructor(
    readonly dir: string,
    readonly pki: Pki,
    readonly kubeconfigPath: string,
    readonly etcd: EtcdConfig,
    readonly apiserver: ApiserverConfig,
    readonly nats: NatsConfig,
    readonly options: TestBedOptions,
    /** every NATS node (one unless natsNodes says otherwise); nats is the first */
    readonly natsNodes: readonly NatsConfig[] = [nats],
    /**
     * What a kubebus client needs besides the URL: KUBEBUS_NATS_CA with
     * natsTls, KUBEBUS_NATS_USER and KUBEBUS_NATS_PASSWORD_FILE with natsAuth.
     */
    readonly natsClientEnv: Readonly<Record<string, string>> = {},
  ) {}

  static async start(requested: TestBedOptions = {}): Promise<TestBed> {
    // KUBEBUS_KEEP_TESTBED=1 keeps logs and data of every test bed for a post-mortem.
    const options = { keepDir: process.env['KUBEBUS_KEEP_TESTBED'] === '1', ...requested };
    // fail first, and clearly, when a server can be found or built nowhere
    await requireServers([
      'kube-apiserver',
      'etcd',
      'nats-server',
      ...(requested.controllerManager === true ? (['kube-controller-manager'] as const) : []),
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'kubebus-testbed-'));
    try {
      const pki = await createPki(dir);
      const admin = await issueClientCert(pki, 'kubebus-admin', ['system:masters']);
      const etcd = await etcdConfig(dir);
      const apiserver = await apiserverConfig(
        dir,
        etcdUrl(etcd),
        pki,
        admin,
        options.apiserverArgs,
      );
      const kubeconfigPath = join(dir, 'kubeconfig');
      writeKubeconfig(kubeconfigPath, apiserverUrl(apiserver), pki.caCert, 'kubebus-admin', admin);
      const nodes = options.natsNodes ?? 1;
      const routePorts = await Promise.all(Array.from({ length: nodes }, () => freePort()));
      const credentials = options.natsAuth === true ? loopbackCredentials(dir) : undefined;
      const nats0 = {
        ...options.nats,
        ...(options.natsTls === true ? await loopbackTls(pki) : {}),
        ...(credentials === undefined ? {} : { auth: credentials }),
      };
      const natsClientEnv = {
        ...(options.natsTls === true ? { KUBEBUS_NATS_CA: pki.caCert } : {}),
        ...credentials?.clientEnv,
      };
      const natsNodes = await Promise.all(
        Array.from({ length: nodes }, (_, node) =>
          natsConfig(dir, nodes === 1 ? nats0 : { ...nats0, cluster: { node, routePorts } }),
        ),
      );
      const [nats] = natsNodes;
      if (nats === undefined) throw new Error('natsNodes must be at least 1');
      const bed = new TestBed(
        dir,
        pki,
        kubeconfigPath,
        etcd,
        apiserver,
        nats,
        options,
        natsNodes,
        natsClientEnv,
      );
      try {
        await bed.#startAll();
      } catch (error) {
        await bed.stop();
        throw error;
      }
      return bed;
    } catch (error) {
      if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  async #startAll(): Promise<void> {
    // NATS and etcd do not depend on each other: start them side by side. Each is
    // registered as soon as it is up, so that stop() reaches it when another fails.
    const started = await Promise.allSettled([
      startEtcd(this.etcd).then((server) => this.#servers.set('etcd', server)),
      ...this.natsNodes.map((node, i) =>
        startNats(node).then((server) => this.#servers.set(natsName(i), server)),
      ),
    ]);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (this.natsNodes.length > 1) await this.#waitForJetStreamLeader();
    this.#servers.set('apiserver', await startApiserver(this.apiserver));
    if (this.options.controllerManager === true) {
      this.#servers.set(
        'controller-manager',
        await startControllerManager(this.dir, this.kubeconfigPath, this.pki.serviceAccountKey),
      );
    }
  }

  get apiserverUrl(): string {
    return apiserverUrl(this.apiserver);
  }

  /** every node's URL, comma-separated (what KUBEBUS_NATS_URL takes) */
  get natsUrl(): string {
    return this.natsNodes.map((node) => natsUrl(node)).join(',');
  }

  /** Stops one node of the NATS cluster (kill -9 by default). */
  async stopNatsNode(node: number, how: 'graceful' | 'kill' = 'kill'): Promise<void> {
    await this.#stopServer(natsName(node), how);
  }

  async startNatsNode(node: number): Promise<void> {
    const config = this.natsNodes[node];
    if (config === undefined) throw new Error(`no NATS node ${node}`);
    this.#servers.set(natsName(node), await startNats(config));
  }

  /** The node (index) leading a stream's raft group, from the monitoring endpoint. */
  async streamLeader(stream: string): Promise<number> {
    for (const node of this.natsNodes) {
      const res = await httpCall(`http://127.0.0.1:${node.monitorPort}/jsz?streams=true`).catch(
        () => undefined,
      );
      if (res?.status !== 200) continue;
      const jsz = JSON.parse(res.body) as {
        account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
      };
      for (const account of jsz.account_details ?? []) {
        const leader = account.stream_detail?.find((d) => d.name === stream)?.cluster?.leader;
        // node names are kubebus_testbed-<index>
        const index = Number(/-(\d+)$/.exec(leader ?? '')?.[1]);
        if (Number.isInteger(index)) return index;
      }
    }
    throw new Error(`no leader known for stream ${stream}`);
  }

  async #waitForJetStreamLeader(): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      for (const node of this.natsNodes) {
        const res = await httpCall(`http://127.0.0.1:${node.monitorPort}/jsz`).catch(
          () => undefined,
        );
        const leader =
          res?.status === 200
            ? (JSON.parse(res.body) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader
            : undefined;
        if (leader !== undefined && leader !== '') return;
      }
      if (Date.now() > deadline)
        throw new Error('the NATS cluster elected no JetStream leader in 60 s');
      await sleep(200);
    }
  }

  /** TLS material for raw HTTPS calls to the apiserver as the admin. */
  get adminTls() {
    return adminTls(this.apiserver);
  }

  /** A client configuration for the admin (system:masters). */
  kubeConfig(): ClientNode.KubeConfig {
    // loaded only here: the kubebus package ships the bed without client-node (an optional peer)
    const { KubeConfig: Config } = createRequire(import.meta.url)(
      '@kubernetes/client-node',
    ) as typeof ClientNode;
    const kc = new Config();
    kc.loadFromFile(this.kubeconfigPath);
    return kc;
  }

  /** A kubeconfig file for a non-admin user, to prove RBAC rules. */
  async userKubeconfig(user: string, groups: readonly string[] = []): Promise<string> {
    const cert = await issueClientCert(this.pki, user, groups);
    const file = join(this.dir, `kubeconfig-${user.replace(/[^a-zA-Z0-9-]/g, '_')}`);
    writeKubeconfig(file, this.apiserverUrl, this.pki.caCert, user, cert);
    return file;
  }

  /**
   * A kubeconfig file with a token of the service account (TokenRequest), so a
   * process runs with exactly the RBAC bound to that account.
   */
  async serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
    const answer = await httpCall(
      `${this.apiserverUrl}/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      {
        method: 'POST',
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        }),
        tls: this.adminTls,
      },
    );
    if (answer.status !== 201)
      throw new Error(`TokenRequest for ${namespace}/${name}: ${answer.status} ${answer.body}`);
    const token = (JSON.parse(answer.body) as { status: { token: string } }).status.token;
    const file = join(this.dir, `kubeconfig-sa-${namespace}-${name}`);
    writeTokenKubeconfig(file, this.apiserverUrl, this.pki.caCert, `${namespace}-${name}`, token);
    return file;
  }

  async stopNats(how: 'graceful' | 'kill' = 'graceful'): Promise<void> {
    await this.#stopServer(natsName(0), how);
  }

  async startNats(): Promise<void> {
    this.#servers.set(natsName(0), await startNats(this.nats));
  }

  /** Restarts nats-server on the same port and store (JetStream state survives). */
  async restartNats(options: { how?: 'graceful' | 'kill'; downForMs?: number } = {}) {
    await this.stopNats(options.how);
    if (options.downForMs !== undefined) await sleep(options.downForMs);
    await this.startNats();
  }

  async stopApiserver(how: 'graceful' | 'kill' = 'graceful'): Promise<void> {
    await this.#stopServer('apiserver', how);
  }

  async startApiserver(): Promise<void> {
    this.#servers.set('apiserver', await startApiserver(this.apiserver));
  }

  /** Restarts kube-apiserver on the same port; its watch cache starts empty. */
  async restartApiserver(options: { how?: 'graceful' | 'kill'; downForMs?: number } = {}) {
    await this.stopApiserver(options.how);
    if (options.downForMs !== undefined) await sleep(options.downForMs);
    await this.startApiserver();
  }

  /**
   * Restarts kube-controller-manager, if it runs: its garbage collector finds
   * resources at start and then every 30 s, so until then it cannot resolve an
   * owner of a kind whose CRD came after it — dependents of a deleted custom
   * resource waited up to ~46 s (its retries back off meanwhile).
   */
  restartControllerManager(): Promise<void> {
    // one at a time, each after the installs before it; stop() waits for it
    // a restart that failed does not fail the ones after it
    this.#kcmRestart = this.#kcmRestart
      .catch(() => undefined)
      .then(async () => {
        if (!this.#servers.has('controller-manager') || this.#stopping) return;
        await this.#stopServer('controller-manager', 'graceful');
        this.#servers.set(
          'controller-manager',
          await startControllerManager(this.dir, this.kubeconfigPath, this.pki.serviceAccountKey),
        );
      });
    return this.#kcmRestart;
  }

  /** Restarts etcd on the same port and data directory. */
  async restartEtcd(options: { how?: 'graceful' | 'kill'; downForMs?: number } = {}) {
    await this.#stopServer('etcd', options.how ?? 'graceful');
    if (options.downForMs !== undefined) await sleep(options.downForMs);
    this.#servers.set('etcd', await startEtcd(this.etcd));
  }

  /**
   * Compacts etcd to its current revision, so watches from an older
   * resourceVersion get 410 Gone. The apiserver's watch cache can still serve
   * recent history; restart the apiserver as well to force the 410.
   */
  async compactEtcd(): Promise<number> {
    return compactEtcd(this.etcd);
  }

  /** Freezes (SIGSTOP) or thaws (SIGCONT) a server: its connections stay open but go silent. */
  signal(server: 'nats' | 'etcd' | 'apiserver', signal: 'SIGSTOP' | 'SIGCONT'): void {
    const running = this.#servers.get(server);
    if (running === undefined) throw new Error(`${server} is not running`);
    running.killGroup(signal);
  }

  /** The last lines of a server's log, for failure messages. */
  logTail(server: 'nats' | 'etcd' | 'apiserver' | 'controller-manager', lines = 30): string {
    return this.#servers.get(server)?.tail(lines) ?? '(not running)';
  }

  async #stopServer(name: string, how: 'graceful' | 'kill'): Promise<void> {
    const server = this.#servers.get(name);
    this.#servers.delete(name);
    if (server === undefined) return;
    await (how === 'kill' ? server.kill() : server.stop());
  }

  /** Stops every server (dependents first) and removes the directory. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#kcmRestart.catch(() => undefined);
    for (const name of ['controller-manager', 'apiserver', 'etcd']) {
      await this.#stopServer(name, 'graceful');
    }
    await Promise.all(this.natsNodes.map((_, i) => this.#stopServer(natsName(i), 'graceful')));
    if (this.options.keepDir !== true) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The first node keeps the name 'nats' (signal() and logTail() use it). */
function natsName(node: number): string {
  return node === 0 ? 'nats' : `nats-${node}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
