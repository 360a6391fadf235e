// The faults, each injected while a burst of DatabaseClusters is being
// reconciled. A scenario gets the running system and returns once the fault
// is over (the servers and services it broke are back).
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TcpProxy } from '../bed/tcp-proxy.js';
import type { TestBed } from '../bed/testbed.js';
import type { Pipeline } from '../support/pipeline.js';
import type { ServiceProcess } from '../support/services.js';

export interface FaultContext {
  readonly bed: TestBed;
  readonly nc: NatsConnection;
  readonly pipeline: Pipeline;
  /** the running services, by role; scenarios replace what they kill */
  readonly roles: {
    watcher: ServiceProcess;
    reconcilers: ServiceProcess[];
    writer: ServiceProcess;
  };
  /** resolves when `fraction` of the burst has been created */
  readonly created: (fraction: number) => Promise<void>;
  /** the proxy between the services and NATS, for scenarios that ask for one */
  readonly proxy?: TcpProxy;
}

export interface Scenario {
  readonly name: string;
  /** objects for this scenario, as a multiple of --n */
  readonly scale?: number;
  /** the services reach NATS through a TCP proxy the scenario can cut */
  readonly throughProxy?: boolean;
  inject(ctx: FaultContext): Promise<void>;
}

const jitter = (ms: number) => Math.round(ms * (0.5 + Math.random()));

/** Once 30% of the burst is created, kill -9 one service and start another in its place. */
async function killAndReplace(
  ctx: FaultContext,
  pick: () => ServiceProcess | undefined,
  start: () => Promise<ServiceProcess>,
  put: (replacement: ServiceProcess) => void,
): Promise<void> {
  await ctx.created(0.3);
  await sleep(jitter(500));
  const victim = pick();
  if (victim === undefined) return;
  await victim.kill();
  ctx.pipeline.forget(victim);
  put(await start());
}

export const scenarios: Scenario[] = [
  {
    name: 'none (baseline)',
    async inject() {},
  },
  {
    name: 'kill -9 watcher',
    inject: (ctx) =>
      killAndReplace(
        ctx,
        () => ctx.roles.watcher,
        () => ctx.pipeline.watcher(),
        (w) => (ctx.roles.watcher = w),
      ),
  },
  {
    name: 'kill -9 reconciler',
    inject: (ctx) =>
      killAndReplace(
        ctx,
        () => ctx.roles.reconcilers[0],
        () => ctx.pipeline.reconciler(),
        (r) => (ctx.roles.reconcilers[0] = r),
      ),
  },
  {
    name: 'kill -9 status writer',
    inject: (ctx) =>
      killAndReplace(
        ctx,
        () => ctx.roles.writer,
        () => ctx.pipeline.statusWriter(),
        (w) => (ctx.roles.writer = w),
      ),
  },
  {
    name: 'kill -9 nats-server (5 s down)',
    async inject(ctx) {
      await ctx.created(0.3);
      await ctx.bed.restartNats({ how: 'kill', downForMs: 5_000 });
    },
  },
  {
    name: 'kill -9 etcd (5 s down)',
    async inject(ctx) {
      await ctx.created(0.3);
      await ctx.bed.restartEtcd({ how: 'kill', downForMs: 5_000 });
    },
  },
  {
    name: 'kube-apiserver stop/start (25 s down)',
    async inject(ctx) {
      await ctx.created(0.3);
      await ctx.bed.restartApiserver({ how: 'graceful', downForMs: 25_000 });
    },
  },
  {
    name: 'kube-apiserver frozen 30 s (SIGSTOP)',
    async inject(ctx) {
      await ctx.created(0.3);
      ctx.bed.signal('apiserver', 'SIGSTOP');
      await sleep(30_000);
      ctx.bed.signal('apiserver', 'SIGCONT');
    },
  },
  {
    name: 'forced 410 (etcd compaction + apiserver restart)',
    async inject(ctx) {
      await ctx.created(0.5);
      await ctx.bed.compactEtcd();
      await ctx.bed.restartApiserver({ how: 'graceful' });
    },
  },
  {
    name: 'lease holder frozen past its TTL (SIGSTOP 20 s)',
    async inject(ctx) {
      await ctx.created(0.3);
      const victim = ctx.roles.reconcilers[0];
      if (victim === undefined) return;
      victim.signal('SIGSTOP');
      await sleep(20_000);
      victim.signal('SIGCONT');
    },
  },
  {
    name: 'replica joins, another leaves (hand-overs under load)',
    scale: 3,
    async inject(ctx) {
      await ctx.created(0.2);
      ctx.roles.reconcilers.push(await ctx.pipeline.reconciler());
      await ctx.created(0.6);
      const leaving = ctx.roles.reconcilers.shift();
      if (leaving !== undefined) {
        await leaving.stop(); // graceful: hands its partitions over
        ctx.pipeline.forget(leaving);
      }
    },
  },
  {
    name: 'network partition between the services and NATS (20 s)',
    throughProxy: true,
    async inject(ctx) {
      await ctx.created(0.3);
      ctx.proxy?.cut();
      await sleep(20_000);
      ctx.proxy?.heal();
    },
  },
  {
    name: 'poison messages on the work and status streams',
    async inject(ctx) {
      await ctx.created(0.3);
      const js = jetstream(ctx.nc);
      for (let i = 0; i < 20; i++) {
        await js.publish(`kubebus.work.databasecluster.p${i % 8}.x.y.z.n${i}`, '{not json');
        await js.publish(
          `kubebus.status.databasecluster.p${i % 8}.x.y.z.n${i}`,
          new Uint8Array([0, 1, 2, 27, 91]),
        );
      }
    },
  },
];
