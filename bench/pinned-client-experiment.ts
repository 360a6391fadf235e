// Would the server's pinned-client priority groups (nats-server >= 2.11) do
// what the KV partition leases do (ADR 0005)? Eight partition consumers with
// priority_policy pinned_client; replica A pulls from all, then B joins, then
// A stops pulling (a crash). Prints which replica received each partition's
// messages in each phase, and how long B waited for A's partitions.
//   node --conditions=source --import tsx bench/pinned-client-experiment.ts
import {
  AckPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  type ConsumerMessages,
} from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { natsConfig, natsUrl, startNats } from '../test/bed/nats.js';

const PARTITIONS = 8;
const PIN_TTL_MS = 5_000;
const dir = mkdtempSync(join(tmpdir(), 'kubebus-pinned-'));
const config = await natsConfig(dir);
const server = await startNats(config);
const admin = await connect({ servers: natsUrl(config) });
const jsm = await jetstreamManager(admin);
await jsm.streams.add({ name: 'W', subjects: ['w.>'], retention: RetentionPolicy.Workqueue });
for (let p = 0; p < PARTITIONS; p++) {
  await jsm.consumers.add('W', {
    durable_name: `p${p}`,
    filter_subject: `w.p${p}.>`,
    ack_policy: AckPolicy.Explicit,
    priority_groups: ['kb'],
    priority_policy: 'pinned_client',
    priority_timeout: PIN_TTL_MS * 1_000_000,
  });
}

const seen = new Map<string, Set<number>>(); // phase/replica → partitions
let phase = 'A alone';
const firstForB = new Map<number, number>();
async function replica(name: string) {
  const nc = await connect({ servers: natsUrl(config) });
  const js = jetstream(nc);
  const subs: ConsumerMessages[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const messages = await (
      await js.consumers.get('W', `p${p}`)
    ).consume({ group: 'kb', max_messages: 10 });
    subs.push(messages);
    void (async () => {
      for await (const m of messages) {
        const id = `${phase} / ${name}`;
        if (!seen.has(id)) seen.set(id, new Set());
        seen.get(id)?.add(p);
        if (name === 'B' && !firstForB.has(p)) firstForB.set(p, performance.now());
        m.ack();
      }
    })();
  }
  return {
    stop: async () => {
      for (const s of subs) s.stop();
      await nc.close();
    },
  };
}

const publisher = jetstream(admin);
const publishRound = async () => {
  for (let p = 0; p < PARTITIONS; p++) await publisher.publish(`w.p${p}.x`, 'x');
};
const a = await replica('A');
for (let i = 0; i < 10; i++) {
  await publishRound();
  await sleep(100);
}
phase = 'B joined';
const b = await replica('B');
for (let i = 0; i < 30; i++) {
  await publishRound();
  await sleep(100);
}
phase = 'A crashed';
await a.stop();
const crashedAt = performance.now();
firstForB.clear();
for (let i = 0; i < 100 && firstForB.size < PARTITIONS; i++) {
  await publishRound();
  await sleep(100);
}
const takeover = [...firstForB.values()].map((t) => t - crashedAt);
for (const [id, partitions] of [...seen].sort())
  process.stdout.write(`${id}: partitions ${[...partitions].sort().join(',')}\n`);
process.stdout.write(
  `B took over A's partitions ${Math.round(Math.min(...takeover))}–${Math.round(Math.max(...takeover))} ms after A stopped (pin TTL ${PIN_TTL_MS} ms)\n`,
);
await b.stop();
await admin.close();
await server.stop();
rmSync(dir, { recursive: true, force: true });
