// What a phase cost the bus, from nats-server's own monitoring endpoint:
// messages clients sent it and it sent them (`/varz`), and messages stored
// per stream (`/jsz`, each stream's last sequence). Per object, these say
// which part of kubebus' NATS traffic — the watcher's events and marks, the
// work acks and heartbeats, reads, leases — the server's CPU goes to.
import { httpCall } from '../test/bed/http.js';

export interface NatsTraffic {
  /** messages clients published to the server (every PUB/HPUB: publishes, requests, acks) */
  readonly inMsgs: number;
  /** messages the server delivered to clients (acks, replies, pulled messages) */
  readonly outMsgs: number;
  /** messages stored, by stream (KV buckets are KV_<bucket>) */
  readonly stored: ReadonlyMap<string, number>;
  /** consumers alive on each stream at the end (durables, and ordered reads not yet expired) */
  readonly consumers: ReadonlyMap<string, number>;
  /** when it was read (ms since the epoch); between two readings: how long the window was (ms) */
  readonly ms: number;
}

interface Varz {
  readonly in_msgs: number;
  readonly out_msgs: number;
}

interface Jsz {
  readonly account_details?: readonly {
    readonly stream_detail?: readonly {
      readonly name: string;
      readonly state: { readonly last_seq: number; readonly consumer_count?: number };
    }[];
  }[];
}

export async function natsTraffic(monitorPort: number): Promise<NatsTraffic> {
  const base = `http://127.0.0.1:${monitorPort}`;
  const varz = JSON.parse((await httpCall(`${base}/varz`)).body) as Varz;
  const jsz = JSON.parse((await httpCall(`${base}/jsz?accounts=true&streams=true`)).body) as Jsz;
  const stored = new Map<string, number>();
  const consumers = new Map<string, number>();
  for (const account of jsz.account_details ?? [])
    for (const stream of account.stream_detail ?? []) {
      stored.set(stream.name, (stored.get(stream.name) ?? 0) + stream.state.last_seq);
      const alive = stream.state.consumer_count ?? 0;
      if (alive > 0) consumers.set(stream.name, (consumers.get(stream.name) ?? 0) + alive);
    }
  return { inMsgs: varz.in_msgs, outMsgs: varz.out_msgs, stored, consumers, ms: Date.now() };
}

export function trafficBetween(before: NatsTraffic, after: NatsTraffic): NatsTraffic {
  const stored = new Map<string, number>();
  for (const [stream, seq] of after.stored) {
    const delta = seq - (before.stored.get(stream) ?? 0);
    if (delta !== 0) stored.set(stream, delta);
  }
  return {
    inMsgs: after.inMsgs - before.inMsgs,
    outMsgs: after.outMsgs - before.outMsgs,
    stored,
    consumers: after.consumers,
    ms: after.ms - before.ms,
  };
}

/** "in 35.1, out 30.2; KUBEBUS_EVENTS 7.0, KUBEBUS_WORK 7.0, …" per object */
export function formatTraffic(traffic: NatsTraffic, objects: number): string {
  const per = (n: number) => (n / objects).toFixed(2);
  const stored = [...traffic.stored]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([stream, n]) => `${stream} ${per(n)}`)
    .join(', ');
  const consumers = [...traffic.consumers]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([stream, n]) => `${stream} ${n}`)
    .join(', ');
  // the window runs until the apiserver is quiet, long after the last object
  // converged: what is written per second (leases, cursors) is over all of it
  const window = `over ${(traffic.ms / 1_000).toFixed(0)} s, to quiet: leases and cursors are written per second, not per object`;
  return `messages in ${per(traffic.inMsgs)}, out ${per(traffic.outMsgs)}; stored: ${stored === '' ? 'none' : stored}; consumers alive at the end: ${consumers === '' ? 'none' : consumers} (${window})`;
}
