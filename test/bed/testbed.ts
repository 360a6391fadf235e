// The test bed: real etcd, kube-apiserver (and optionally kube-controller-manager)
// and nats-server on free loopback ports in a temporary directory, like
// controller-runtime's envtest. Everything it starts, it stops.
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adminTls,
  apiserverConfig,
  apiserverUrl,
  startApiserver,
  type ApiserverConfig,
} from './apiserver.js';
import { serversBinDir } from './binaries.js';
import { startControllerManager } from './controller-manager.js';
import { compactEtcd, etcdConfig, etcdUrl, startEtcd, type EtcdConfig } from './etcd.js';
import { writeKubeconfig } from './kubeconfig.js';
import { natsConfig, natsUrl, startNats, type NatsConfig, type NatsOptions } from './nats.js';
import { createPki, issueClientCert, type Pki } from './pki.js';
import type { ServerProcess } from './process.js';

export interface TestBedOptions {
  /** Also run kube-controller-manager (garbage collection of owned objects). */
  readonly controllerManager?: boolean;
  readonly nats?: NatsOptions;
  readonly apiserverArgs?: readonly string[];
  /** Keep the directory (logs, data) after stop, for a person to read. */
  readonly keepDir?: boolean;
}

export class TestBed {
  readonly #servers = new Map<string, ServerProcess>();

  private constructor(
    readonly dir: string,
    readonly pki: Pki,
    readonly kubeconfigPath: string,
    readonly etcd: EtcdConfig,
    readonly apiserver: ApiserverConfig,
    readonly nats: NatsConfig,
    readonly options: TestBedOptions,
  ) {}

  static async start(requested: TestBedOptions = {}): Promise<TestBed> {
    // KUBEBUS_KEEP_TESTBED=1 keeps logs and data of every test bed for a post-mortem.
    const options = { keepDir: process.env['KUBEBUS_KEEP_TESTBED'] === '1', ...requested };
    serversBinDir(); // fail first, and clearly, when the servers cannot be built
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
      const nats = await natsConfig(dir, options.nats);
      const bed = new TestBed(dir, pki, kubeconfigPath, etcd, apiserver, nats, options);
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
    // NATS and etcd do not depend on each other: start them side by side.
    const [nats, etcd] = await Promise.all([startNats(this.nats), startEtcd(this.etcd)]);
    this.#servers.set('nats', nats);
    this.#servers.set('etcd', etcd);
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

  get natsUrl(): string {
    return natsUrl(this.nats);
  }

  /** TLS material for raw HTTPS calls to the apiserver as the admin. */
  get adminTls() {
    return adminTls(this.apiserver);
  }

  /** A client configuration for the admin (system:masters). */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
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

  async stopNats(how: 'graceful' | 'kill' = 'graceful'): Promise<void> {
    await this.#stopServer('nats', how);
  }

  async startNats(): Promise<void> {
    this.#servers.set('nats', await startNats(this.nats));
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
    for (const name of ['controller-manager', 'apiserver', 'etcd', 'nats']) {
      await this.#stopServer(name, 'graceful');
    }
    if (this.options.keepDir !== true) rmSync(this.dir, { recursive: true, force: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
