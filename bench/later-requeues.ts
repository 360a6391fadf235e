// Requeues waiting at scale (ADR 0034): what it costs nats-server and a
// reconciler to hold `waiting` requeues due in an hour on the operator's one
// `<op>_later` consumer, and how late `due` more requeues, due in a few
// seconds meanwhile, reach their partitions. The real LaterRequeues (park,
// pull, nak the rest of the delay, hand on) on kubebus' topology and the
// consumer as the topology step declares it; nothing else.
//   node --conditions=source --import tsx bench/later-requeues.ts [waiting] [due]
import {
  applyTopology,
  consumerConfigOf,
  laterConsumer,
  LaterRequeues,
  parseWorkMark,
  Streams,
  subjects,
} from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import { keyString } from '@kubebus/shared/runtime';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsConfig, natsUrl, startNats } from '../test/bed/nats.js';
import { procStats, serverPid } from './proc-stats.js';

const WAITING = Number(process.argv[2] ?? 10_000);
const DUE = Number(process.argv[3] ?? 1_000);
const CONTROLLER = 'certificate';
const PARTITIONS = 16;
const HOUR_MS = 3_600_000;
/** the due requeues' delays: spread over 5–15 s from when each is parked */
const DUE_FROM_MS = 5_000;
const DUE_SPREAD_MS = 10_000;
const HOLD_S = 30;
/** no phase takes longer on a working bus */
const PHASE_LIMIT_MS = 300_000;

if (WAITING + DUE > 100_000) {
  // past the consumer's max_ack_pending the due ones would wait behind the hour-long ones
  console.error('waiting + due must be at most 100,000 (the <op>_later consumer holds that many)');
  process.exit(2);
}

/** Resolves with `promise`, or fails after PHASE_LIMIT_MS naming what did not happen. */
async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what}: not done in ${String(PHASE_LIMIT_MS / 1_000)} s`));
    }, PHASE_LIMIT_MS);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

const keyOf = (i: number) => ({
  group: 'example.kubebus.dev',
  resource: 'certificates',
  namespace: `bench-${'abcd'[i % 4] ?? 'a'}`,
  name: `cert-${String(i).padStart(6, '0')}`,
});

const dir = mkdtempSync(join(tmpdir(), 'kubebus-later-'));
const config = await natsConfig(dir);
const server = await startNats(config);
const nc = await connect({ servers: natsUrl(config) });
const log = createLogger({ level: 'warn', service: 'bench' });
try {
  await applyTopology(nc);
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(Streams.work, consumerConfigOf(laterConsumer(CONTROLLER, 5_000)));
  const later = new LaterRequeues(jetstream(nc), CONTROLLER, PARTITIONS, log);
  const nats = serverPid('nats-server', dir);
  const sample = () => ({
    at: performance.now(),
    client: procStats([process.pid]).cpuSeconds,
    server: nats === undefined ? Number.NaN : procStats([nats]).cpuSeconds,
    serverRssMb: nats === undefined ? Number.NaN : procStats([nats]).rssMb,
  });
  const report = (phase: string, from: ReturnType<typeof sample>, extra = '') => {
    const to = sample();
    console.log(
      `${phase}: ${((to.at - from.at) / 1_000).toFixed(1)} s, CPU client ${(to.client - from.client).toFixed(2)} s, nats-server ${(to.server - from.server).toFixed(2)} s, nats-server RSS ${to.serverRssMb.toFixed(0)} MB${extra}`,
    );
    return to;
  };
  const park = async (from: number, count: number, delayOf: (i: number) => number) => {
    let next = from;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = next++; i < from + count; i = next++)
          await later.park(keyOf(i), delayOf(i), { reason: 'requeue' });
      }),
    );
  };
  const ackPending = async () =>
    (await jsm.consumers.info(Streams.work, `${CONTROLLER}_later`)).num_ack_pending;

  console.log(`${WAITING} requeues waiting an hour, then ${DUE} due in 5–15 s`);
  let mark = sample();
  await park(0, WAITING, () => HOUR_MS);
  mark = report(`park ${WAITING}`, mark);

  later.start();
  await within(
    'pulling the waiting requeues',
    (async () => {
      while ((await ackPending()) < WAITING) await new Promise((r) => setTimeout(r, 200));
    })(),
  );
  mark = report(`all ${WAITING} pulled and nak'd for their delay`, mark);

  await new Promise((r) => setTimeout(r, HOLD_S * 1_000));
  mark = report(`hold ${HOLD_S} s`, mark);

  // the due ones: when each reaches its partition, against when it was due
  const dueAt = new Map<string, number>();
  const lateness: number[] = [];
  let arrived: () => void = () => undefined;
  const allArrived = new Promise<void>((resolve) => (arrived = resolve));
  const partitions = nc.subscribe(subjects.workOf(CONTROLLER), {
    callback: (_error, message) => {
      if (message.subject.includes('.later.')) return;
      const parsed = parseWorkMark(message.data);
      if (!parsed.ok) return;
      const id = keyString(parsed.mark.key);
      const due = dueAt.get(id);
      if (due === undefined) return;
      dueAt.delete(id);
      lateness.push(Date.now() - due);
      if (lateness.length === DUE) arrived();
    },
  });
  await park(WAITING, DUE, (i) => {
    const delay = DUE_FROM_MS + ((i * 7919) % DUE_SPREAD_MS);
    dueAt.set(keyString(keyOf(i)), Date.now() + delay);
    return delay;
  });
  await within('the due requeues reaching their partitions', allArrived);
  partitions.unsubscribe();
  lateness.sort((a, b) => a - b);
  const at = (q: number) =>
    lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))];
  report(
    `${DUE} due while ${WAITING} wait`,
    mark,
    `; late by p50 ${String(at(0.5))} ms, p99 ${String(at(0.99))} ms, max ${String(lateness.at(-1))} ms`,
  );
  await later.stop();
} finally {
  await nc.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
