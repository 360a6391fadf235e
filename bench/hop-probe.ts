// A probe of one hop's latency with and without NATS writes coalesced per
// event-loop turn (ADR 0027): chains that, on each answer, publish (an ack),
// then send their next request from the check phase (as the object reader's
// batched reads do), on a loop kept busy by the other chains. Three ways:
// nats-core's own writes; coalesced, the request sent from an immediate of
// its own (after the turn's write, as before turn-end.ts); coalesced, the
// request gathered before the turn's write (turn-end.ts, as the reader does).
// node --import tsx bench/hop-probe.ts [chains] [hops]
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';
import { gatherAtTurnEnd } from '../shared/src/bus/turn-end.js';
import { coalesceWrites } from '../shared/src/bus/write-coalescing.js';
import { standaloneNats } from '../test/support/standalone-nats.js';

const chains = Number(process.argv[2] ?? 8);
const hops = Number(process.argv[3] ?? 500);

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

type Way = 'nats-core' | 'coalesced' | 'gathered';

async function chain(nc: NatsConnection, way: Way, id: number, times: number[]): Promise<void> {
  for (let hop = 0; hop < hops; hop++) {
    const start = performance.now();
    await new Promise<void>((resolve) => {
      if (way === 'gathered') gatherAtTurnEnd(resolve);
      else setImmediate(resolve);
    });
    await nc.request('echo', `${String(id)}/${String(hop)}`, { timeout: 10_000 });
    times.push(performance.now() - start);
    // the work an answer starts, and the ack it sends
    busy(0.2);
    nc.publish('acks', 'ack');
  }
}

async function run(url: string, way: Way): Promise<string> {
  const nc = await connect({ servers: url });
  if (way !== 'nats-core') coalesceWrites(nc);
  const times: number[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: chains }, (_, id) => chain(nc, way, id, times)));
  const wall = performance.now() - started;
  await nc.close();
  times.sort((a, b) => a - b);
  const at = (q: number) => (times[Math.floor(q * (times.length - 1))] ?? 0).toFixed(2);
  return `${way}: hop p50 ${at(0.5)} p90 ${at(0.9)} p99 ${at(0.99)} ms, ${String(times.length)} hops in ${(wall / 1000).toFixed(2)} s`;
}

const nats = await standaloneNats('hop-probe');
const service = nats.nc.subscribe('echo', {
  callback: (_error, message) => {
    message.respond(message.data);
  },
});
await nats.nc.flush();
for (let round = 0; round < 3; round++)
  for (const way of ['nats-core', 'coalesced', 'gathered'] as const)
    process.stdout.write(`${await run(nats.url, way)}\n`);
service.unsubscribe();
await nats.stop();
