// The bus' floor: kubebus' NATS traffic for N created objects — as the bench
// counts it per object (bench/nats-traffic.ts) — with nothing else: no
// apiserver, no watch, no reconcile logic, no zod, no logs. The same streams
// (kubebus' topology), the same client, the same durable consumers as
// kubebus-one on the independent harness (the definition's default work
// partitions, 8 status partitions), 8 workers. Per object: the primary's event and work mark; its
// first reconcile reads the primary and four owned objects, publishes a status
// intent and the seven events (with marks) its writes would cause; every
// reconcile records an outcome; the status writer reads, acks and records;
// leases are renewed every second and five watch cursors every 200 ms. What
// this costs in CPU (this process and nats-server's) is the part of
// kubebus-one's cost that the architecture sets, with this client.
//   node --conditions=source --import tsx bench/bus-floor.ts [objects]
import { applyTopology, partitionOf, subjects, Streams, Buckets } from '@kubebus/shared/bus';
import { DEFAULT_PARTITIONS } from '@kubebus/shared/definition';
import { jetstream, jetstreamManager, AckPolicy, type JsMsg } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsConfig, natsUrl, startNats } from '../test/bed/nats.js';
import { formatTraffic, natsTraffic, trafficBetween } from './nats-traffic.js';
import { procStats, serverPid } from './proc-stats.js';

const N = Number(process.argv[2] ?? 1_000);
const WORK_PARTITIONS = DEFAULT_PARTITIONS;
const STATUS_PARTITIONS = 8;
const WORKERS = 8;
const CONTROLLER = 'databasecluster';
const encoder = new TextEncoder();
/** a recorded object's size on the bus (a StatefulSet's event is about this) */
const event = encoder.encode(JSON.stringify({ data: 'x'.repeat(3_000) }));
const small = encoder.encode(JSON.stringify({ reason: 'watch', time: new Date().toISOString() }));
const kinds = ['databaseclusters', 'statefulsets', 'services', 'configmaps', 'secrets'];
const keyOf = (i: number, resource = 'databaseclusters') => ({
  group: resource === 'databaseclusters' ? 'example.kubebus.dev' : '',
  resource,
  namespace: `bench-${'abcd'[i % 4] ?? 'a'}`,
  name: `db-${String(i).padStart(5, '0')}`,
});

const dir = mkdtempSync(join(tmpdir(), 'kubebus-bus-floor-'));
const config = await natsConfig(dir);
const server = await startNats(config);
const nc = await connect({ servers: natsUrl(config) });
try {
  await applyTopology(nc);
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const kvm = new Kvm(nc);
  const leases = await kvm.open(Buckets.leases);
  const cursors = await kvm.open(Buckets.cursors);
  const durables = [
    ...Array.from({ length: WORK_PARTITIONS }, (_, p) => ({
      stream: Streams.work,
      name: `floor_p${p}`,
      filter: subjects.workOfPartition(CONTROLLER, p),
    })),
    ...Array.from({ length: STATUS_PARTITIONS }, (_, p) => ({
      stream: Streams.status,
      name: `floor_status_p${p}`,
      filter: subjects.statusOfPartition(CONTROLLER, p),
    })),
  ];
  for (const d of durables)
    await jsm.consumers.add(d.stream, {
      durable_name: d.name,
      filter_subject: d.filter,
      ack_policy: AckPolicy.Explicit,
      ack_wait: 5_000_000_000,
      max_ack_pending: 2,
    });

  let slots = WORKERS;
  const waiting: (() => void)[] = [];
  const acquire = async () => {
    while (slots === 0) await new Promise<void>((resolve) => waiting.push(resolve));
    slots--;
  };
  const release = () => {
    slots++;
    waiting.shift()?.();
  };
  const reconciled = new Set<number>();
  /** the watcher's publishes a reconcile's writes caused, still on their way */
  const caused = new Set<Promise<unknown>>();
  const cause = (publishing: Promise<unknown>) => {
    caused.add(publishing);
    void publishing.finally(() => caused.delete(publishing));
  };
  let statusDone = 0;
  let allStatus: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allStatus = resolve));

  /** the watcher: an object's event, then its owner's work mark */
  const change = async (i: number, resource: string, seq: number) => {
    await js.publish(subjects.event(keyOf(i, resource)), event, {
      msgID: `${i}/${resource}/${seq}`,
    });
    const key = keyOf(i);
    await js.publish(subjects.work(CONTROLLER, partitionOf(key, WORK_PARTITIONS), key), small, {
      msgID: `${CONTROLLER}/${i}/${resource}/${seq}`,
    });
  };
  const indexOf = (message: JsMsg) => Number(message.subject.split('.').at(-1)?.slice(3));

  let reconciles = 0;
  let ownedRead = 0;
  const reconcile = async (message: JsMsg) => {
    reconciles++;
    const i = indexOf(message);
    await jsm.direct.getMessage(Streams.events, { last_by_subj: subjects.event(keyOf(i)) });
    const owned = await jsm.direct.getLastMessagesFor(Streams.events, {
      multi_last: kinds.slice(1).map((resource) => subjects.event(keyOf(i, resource))),
    });
    // a first reconcile finds none: its own writes cause them
    for await (const stored of owned) ownedRead += stored.data.length > 0 ? 1 : 0;
    if (!reconciled.has(i)) {
      reconciled.add(i);
      // what its writes cause: the finalizer, four owned objects, the Secret's
      // annotation, and later its status
      cause(
        Promise.all([
          change(i, 'databaseclusters', 2),
          ...kinds.slice(1).map((resource) => change(i, resource, 1)),
          change(i, 'secrets', 2),
        ]),
      );
      await js.publish(
        subjects.status(CONTROLLER, partitionOf(keyOf(i), STATUS_PARTITIONS), keyOf(i)),
        small,
        {
          msgID: `status/${i}`,
        },
      );
    }
    message.ack();
    nc.publish(subjects.outcome(CONTROLLER, keyOf(i)), small);
  };
  const writeStatus = async (message: JsMsg) => {
    const i = indexOf(message);
    await jsm.direct.getMessage(Streams.events, { last_by_subj: subjects.event(keyOf(i)) });
    message.ack();
    nc.publish(subjects.outcome(`${CONTROLLER}.status-writer`, keyOf(i)), small);
    cause(change(i, 'databaseclusters', 3));
    if (++statusDone === N) allStatus();
  };
  const consumers = await Promise.all(
    durables.map(async (d) => {
      const messages = await (
        await js.consumers.get(d.stream, d.name)
      ).consume({ max_messages: 2 });
      void (async () => {
        for await (const message of messages) {
          await acquire();
          void (d.stream === Streams.work ? reconcile(message) : writeStatus(message)).finally(
            release,
          );
        }
      })();
      return messages;
    }),
  );
  const renewals = setInterval(() => {
    for (let p = 0; p < WORK_PARTITIONS + STATUS_PARTITIONS; p++)
      void leases.put(`floor.p${p}`, small);
  }, 1_000);
  const flushes = setInterval(() => {
    for (const resource of kinds) void cursors.put(`floor.${resource}`, small);
  }, 200);

  const nats = serverPid('nats-server', dir);
  const cpu = () => ({
    client: procStats([process.pid]).cpuSeconds,
    server: nats === undefined ? Number.NaN : procStats([nats]).cpuSeconds,
  });
  const trafficBefore = await natsTraffic(config.monitorPort);
  const before = cpu();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < N; i = next++) await change(i, 'databaseclusters', 0);
    }),
  );
  await finished;
  // the last events (the status' own) and marks, and their reconciles
  for (;;) {
    await Promise.all([...caused]);
    const info = await jsm.streams.info(Streams.work);
    if (info.state.messages === 0 && caused.size === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - started) / 1_000;
  const after = cpu();
  const traffic = trafficBetween(trafficBefore, await natsTraffic(config.monitorPort));
  clearInterval(renewals);
  clearInterval(flushes);
  for (const messages of consumers) messages.stop();
  const perObject = (s: number) => ((s * 1e6) / N).toFixed(0);
  process.stdout.write(
    `bus floor, N=${N}: ${seconds.toFixed(1)} s; CPU s: this process ${(after.client - before.client).toFixed(2)} (${perObject(after.client - before.client)} µs/object), nats-server ${(after.server - before.server).toFixed(2)} (${perObject(after.server - before.server)} µs/object)\n  per object: ${formatTraffic(traffic, N)}; reconciles ${(reconciles / N).toFixed(2)}, owned records read ${(ownedRead / N).toFixed(2)}\n`,
  );
} finally {
  await nc.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
