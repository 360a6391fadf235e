// What the durable profile costs: the watcher's publish path (ordered, bounded
// in-flight, deduplicated) into KUBEBUS_EVENTS on a nats-server with the
// default sync_interval and on one with `sync_interval: always`, in the same
// run, alternating rounds. Prints each throughput and their ratio.
//   node --import tsx bench/durable-profile.ts [messages] [rounds]
import { OrderedPublisher, applyTopology, subjects } from '@kubebus/shared/bus';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsConfig, natsUrl, startNats } from '../test/bed/nats.js';

const messages = Number(process.argv[2] ?? 5_000);
const rounds = Number(process.argv[3] ?? 3);
const payload = new TextEncoder().encode(JSON.stringify({ data: 'x'.repeat(2_000) }));

async function measure(syncInterval: string | undefined, round: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-bench-'));
  const config = await natsConfig(dir, syncInterval === undefined ? {} : { syncInterval });
  const server = await startNats(config);
  const nc = await connect({ servers: natsUrl(config) });
  try {
    await applyTopology(nc);
    const js = jetstream(nc);
    const publisher = new OrderedPublisher(js, {
      maxInFlight: 256,
      retry: { baseMs: 50, capMs: 1_000 },
      ackTimeoutMs: 10_000,
      maxRejections: 3,
    });
    const started = performance.now();
    for (let i = 0; i < messages; i++) {
      const key = { group: 'bench', resource: 'things', namespace: 'ns', name: `obj-${i % 500}` };
      await publisher.submit(subjects.event(key), [
        { subject: subjects.event(key), payload, headers: {}, msgId: `r${round}/${i}` },
      ]);
    }
    await publisher.flush();
    return messages / ((performance.now() - started) / 1_000);
  } finally {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const fast: number[] = [];
const durable: number[] = [];
for (let round = 0; round < rounds; round++) {
  fast.push(await measure(undefined, round));
  durable.push(await measure('always', round));
}
const ratio = median(durable) / median(fast);
process.stdout.write(
  `${messages} messages of ${payload.byteLength} bytes, ${rounds} rounds (median)\n` +
    `default sync_interval: ${median(fast).toFixed(0)} msg/s\n` +
    `sync_interval always:  ${median(durable).toFixed(0)} msg/s\n` +
    `durable / default:     ${ratio.toFixed(2)}\n`,
);
