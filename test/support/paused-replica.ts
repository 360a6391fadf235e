// A reconciler replica in a process of its own, for the paused-replica test:
// it takes every partition of a work stream on a real nats-server (the leases
// and consumers of runPartitioned). Its first reconcile stops the world right
// before its write — the whole process, its timers and renewals too, as a
// long garbage collection does — for longer than its lease; then writes, the
// write fenced as a reconcile's writes are (runtime.fence, then the signal).
// A write is a request to the parent naming the reconcile that made it. It prints one line per thing the parent
// waits for: `ready`, then `refused` or `wrote` per reconcile.
// Usage: node --import tsx paused-replica.ts <nats url> <parent url> <lease ttl ms> <pause ms>
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { leaseBucketOf, runPartitioned } from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import { Controller, reconcilerFunc, runtimeMetrics } from '@kubebus/shared/runtime';

const [natsUrl, parentUrl, ttl, pause] = process.argv.slice(2);
if (natsUrl === undefined || parentUrl === undefined || ttl === undefined || pause === undefined)
  throw new Error('usage: paused-replica.ts <nats url> <parent url> <lease ttl ms> <pause ms>');
const TTL = Number(ttl);
const PARTITIONS = 2;

const silent = createLogger({
  service: 'paused-replica',
  destination: new Writable({
    write: (_chunk, _enc, done) => {
      done();
    },
  }),
});
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Blocks the process' only thread: no timer, no I/O, no lease renewal runs meanwhile. */
function stopTheWorld(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const nc = await connect({ servers: natsUrl });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: 'PAUSE', subjects: ['pause.>'] });
const leases = leaseBucketOf(
  await new Kvm(nc).create('pause_leases', { history: 1, ttl: TTL }),
  nc,
  true,
  jsm,
  'pause_leases',
);

let reconciles = 0;
const controller = new Controller(
  reconcilerFunc(async (_request, runtime) => {
    const reconcile = ++reconciles;
    if (reconcile === 1) stopTheWorld(Number(pause));
    try {
      runtime.fence?.();
      runtime.signal.throwIfAborted();
    } catch (error) {
      say('refused');
      throw error;
    }
    await fetch(`${parentUrl}/write?reconcile=${reconcile}`, { method: 'POST' });
    say('wrote');
    return undefined;
  }),
  {
    name: 'paused',
    maxConcurrent: 1,
    retry: { baseMs: 60_000, capMs: 60_000, maxAttempts: 1 },
    heartbeatMs: 1_000,
    metrics: runtimeMetrics(new Registry()),
    log: silent,
    onDeadLetter: () => Promise.resolve(),
  },
);

await runPartitioned(
  { js: jetstream(nc), jsm, leases, controller, log: silent },
  {
    stream: 'PAUSE',
    durable: (partition) => `pause-${partition}`,
    filterOf: (partition) => `pause.${partition}.>`,
    ackWaitMs: 5_000,
    maxAckPending: 10,
    parse: (message) => ({ ok: true, key: message.json() }),
    onMalformed: () => Promise.resolve(),
    replicaId: 'paused',
    leaseGroup: 'paused',
    partitions: PARTITIONS,
    renewEveryMs: Math.floor(TTL / 10),
    leaseTtlMs: TTL,
  },
);
say('ready');
