// Partition leases on a real nats-server KV bucket: two replicas never act on
// one partition at once — not while one hands partitions over slowly (its
// renewals must not wait behind the hand-over), and not when one stops being
// able to renew (it must fence itself before the server expires its keys).
import {
  leaseBucketOf,
  leaseKey,
  PartitionLeases,
  PASS_IDLE_MS,
  type LeaseBucket,
} from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';
import { waitFor } from '../support/wait.js';

const TTL = 3_000;
const RENEW = 300;
const PARTITIONS = 8;
const silent = createLogger({
  service: 'test',
  destination: new Writable({
    write: (_c, _e, done) => {
      done();
    },
  }),
});

interface Replica {
  readonly leases: PartitionLeases;
  /** partitions this replica is consuming (acquired and not yet released or lost) */
  readonly consuming: Set<number>;
  readonly lost: number[];
}

describe('partition leases', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  before(async () => {
    nats = await standaloneNats('leases');
    ({ nc } = nats);
    jsm = await jetstreamManager(nc);
  });

  after(() => nats.stop());

  const bucket = async (name: string) =>
    leaseBucketOf(await new Kvm(nc).create(name, { history: 1, ttl: TTL }), nc, true, jsm, name);

  function replica(
    bucket: LeaseBucket,
    id: string,
    group: string,
    releasing: (p: number) => Promise<void>,
    more: { readonly instance?: string; readonly log?: typeof silent } = {},
  ): Replica {
    const consuming = new Set<number>();
    const lost: number[] = [];
    const leases = new PartitionLeases(bucket, {
      group,
      replicaId: id,
      partitions: PARTITIONS,
      renewEveryMs: RENEW,
      ttlMs: TTL,
      log: more.log ?? silent,
      ...(more.instance === undefined ? {} : { instance: more.instance }),
      onAcquired: async (p) => {
        consuming.add(p);
      },
      onReleasing: async (p) => {
        await releasing(p);
        consuming.delete(p);
      },
      onLost: (p) => {
        lost.push(p);
        consuming.delete(p);
      },
    });
    return { leases, consuming, lost };
  }

  /** Samples both replicas until `done`, failing on any partition consumed by both. */
  async function neverOverlap(a: Replica, b: Replica, done: () => boolean, what: string) {
    await waitFor(
      () => {
        const both = [...a.consuming].filter((p) => b.consuming.has(p));
        assert.deepEqual(both, [], `partitions consumed by two replicas: ${both.join(', ')}`);
        return done();
      },
      what,
      60_000,
    );
  }

  it('shares the partitions of two live processes given one replica id, and says so', async () => {
    const kv = await bucket('leases_same_id');
    const lines: string[] = [];
    const logged = createLogger({
      service: 'test',
      level: 'warn',
      destination: { write: (line: string) => void lines.push(line) },
    });
    // two `kubebus run` on one host: one host name, two processes
    const a = replica(kv, 'host', 'g9', async () => undefined, { instance: 'aaaa', log: logged });
    await a.leases.start();
    assert.equal(a.consuming.size, PARTITIONS);
    const b = replica(kv, 'host', 'g9', async () => undefined, { instance: 'bbbb', log: logged });
    await b.leases.start();
    await neverOverlap(
      a,
      b,
      () => a.consuming.size === PARTITIONS / 2 && b.consuming.size === PARTITIONS / 2,
      'the two processes to share the partitions',
    );
    assert.deepEqual([a.leases.memberId, b.leases.memberId], ['host', 'host-bbbb']);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(
      lines[0] ?? '',
      /another live process is replica \\"host\\" of g9 .*takes part as \\"host-bbbb\\"; give each its own KUBEBUS_REPLICA_ID/,
    );
    // the leases say which process holds each partition
    const holders = await Promise.all(
      Array.from({ length: PARTITIONS }, async (_, p) =>
        (await kv.kv.get(leaseKey('g9', p)))?.string(),
      ),
    );
    assert.deepEqual([...new Set(holders)].sort(), ['host', 'host-bbbb']);
    await Promise.all([a.leases.stop(), b.leases.stop()]);
  });

  it('takes over the replica id a process that died left', async () => {
    const kv = await bucket('leases_dead_id');
    // the member key of a process killed a moment ago: not renewed, it waits for its TTL
    await kv.kv.put('g10.member.host', JSON.stringify({ at: new Date(), instance: 'dead' }));
    const b = replica(kv, 'host', 'g10', async () => undefined, { instance: 'bbbb' });
    await b.leases.start();
    await waitFor(() => b.consuming.size === PARTITIONS, 'the restarted process to take them all');
    assert.equal(b.leases.memberId, 'host');
    await b.leases.stop();
  });

  it('keeps renewing while a hand-over waits for running work longer than the TTL', async () => {
    const kv = await bucket('leases_handover');
    let finishWork: () => void = () => undefined;
    const work = new Promise<void>((resolve) => (finishWork = resolve));
    const a = replica(kv, 'a', 'g1', () => work); // reconciles that take far longer than the TTL
    await a.leases.start();
    assert.equal(a.consuming.size, PARTITIONS);
    const b = replica(kv, 'b', 'g1', async () => undefined);
    await b.leases.start();
    // For three TTLs, A hands half its partitions over but cannot finish: it keeps
    // renewing all of them, so B gets none of them and nothing is lost.
    const until = Date.now() + 3 * TTL;
    await neverOverlap(a, b, () => Date.now() > until, 'three TTLs to pass');
    assert.deepEqual(a.lost, [], 'no lease of A expired during its hand-over');
    assert.equal(a.consuming.size, PARTITIONS);
    finishWork();
    await neverOverlap(
      a,
      b,
      () => a.consuming.size === PARTITIONS / 2 && b.consuming.size === PARTITIONS / 2,
      'the hand-over to finish',
    );
    await Promise.all([a.leases.stop(), b.leases.stop()]);
  });

  it('keeps renewing while stopping waits for running work longer than the TTL', async () => {
    const kv = await bucket('leases_stop');
    let finishWork: () => void = () => undefined;
    const work = new Promise<void>((resolve) => (finishWork = resolve));
    const a = replica(kv, 'a', 'g4', () => work);
    await a.leases.start();
    assert.equal(a.consuming.size, PARTITIONS);
    // A shuts down gracefully while its reconciles run on; B starts meanwhile.
    const stopped = a.leases.stop();
    const b = replica(kv, 'b', 'g4', async () => undefined);
    await b.leases.start();
    // For three TTLs A cannot finish: its leases are still renewed, so B takes none.
    const until = Date.now() + 3 * TTL;
    await neverOverlap(a, b, () => Date.now() > until, 'three TTLs to pass');
    assert.deepEqual(a.lost, [], 'no lease of A expired while it was stopping');
    assert.equal(b.consuming.size, 0);
    finishWork();
    await stopped;
    assert.equal(a.consuming.size, 0);
    await neverOverlap(a, b, () => b.consuming.size === PARTITIONS, 'B to take every partition');
    await b.leases.stop();
  });

  it('fences a replica that cannot renew before the server gives its partitions away', async () => {
    const real = await bucket('leases_fence');
    let stall = false;
    // A replica whose writes stop reaching the server (a network partition):
    // they hang; reads still work.
    const stalling = {
      ...real,
      kv: new Proxy(real.kv, {
        get(target, property, receiver) {
          if (stall && ['update', 'put', 'create'].includes(String(property)))
            return () => new Promise(() => undefined);
          const value: unknown = Reflect.get(target, property, receiver);
          return typeof value === 'function'
            ? (value as (...a: unknown[]) => unknown).bind(target)
            : value;
        },
      }),
    };
    const a = replica(stalling, 'a', 'g2', async () => undefined);
    await a.leases.start();
    assert.equal(a.consuming.size, PARTITIONS);
    const b = replica(real, 'b', 'g2', async () => undefined);
    stall = true;
    const stalledAt = performance.now();
    await b.leases.start();
    await neverOverlap(a, b, () => b.consuming.size === PARTITIONS, 'B to take every partition');
    assert.equal(a.lost.length, PARTITIONS, 'A stopped every partition itself');
    assert.ok(performance.now() - stalledAt >= TTL / 2, 'not before its own deadline');
    await b.leases.stop();
  });

  it('does not move partitions between two steady replicas', async () => {
    const kv = await bucket('leases_steady');
    let releases = 0;
    const a = replica(kv, 'a', 'g3', async () => {
      releases++;
    });
    await a.leases.start();
    const b = replica(kv, 'b', 'g3', async () => {
      releases++;
    });
    await b.leases.start();
    await waitFor(
      () => a.consuming.size === PARTITIONS / 2 && b.consuming.size === PARTITIONS / 2,
      'the partitions to be shared',
    );
    const balancedAfter = releases;
    // Forty renewal rounds each, member keys rewritten while the others list them.
    const until = Date.now() + 40 * RENEW;
    await neverOverlap(a, b, () => Date.now() > until, 'forty rounds');
    assert.equal(releases, balancedAfter, 'no hand-over once balanced');
    await Promise.all([a.leases.stop(), b.leases.stop()]);
  });

  it('lists the live member keys in one request, with no consumer', async () => {
    const leases = await bucket('leases_listing');
    await leases.kv.put('g5.member.a', 'x');
    await leases.kv.put('g5.member.host.example.org', 'x'); // a replica id with dots
    await leases.kv.put('g5.member.gone', 'x');
    await leases.kv.delete('g5.member.gone');
    await leases.kv.put('g5.member.purged', 'x');
    await leases.kv.purge('g5.member.purged');
    await leases.kv.put('g5.lease.p0', 'a');
    await leases.kv.put('g6.member.other', 'x');
    const consumerRequests: string[] = [];
    const consumersCreated: { config?: { inactive_threshold?: number } }[] = [];
    const tap = nc.subscribe('$JS.API.CONSUMER.>', {
      callback: (_error, message) => {
        consumerRequests.push(message.subject);
        if (message.subject.startsWith('$JS.API.CONSUMER.CREATE.'))
          consumersCreated.push(message.json());
      },
    });
    let directGets = 0;
    const gets = nc.subscribe('$JS.API.DIRECT.GET.KV_leases_listing', {
      callback: () => {
        directGets++;
      },
    });
    await nc.flush();
    assert.deepEqual((await leases.keysUnder('g5.member.')).sort(), [
      'g5.member.a',
      'g5.member.host.example.org',
    ]);
    assert.deepEqual(await leases.keysUnder('g7.member.'), []);
    await nc.flush();
    gets.unsubscribe();
    assert.equal(directGets, 2, 'one request per listing');
    // two replicas sharing partitions over many rounds list members without one either
    const a = replica(leases, 'a', 'g8', async () => undefined);
    const b = replica(leases, 'b', 'g8', async () => undefined);
    await Promise.all([a.leases.start(), b.leases.start()]);
    await waitFor(
      () => a.consuming.size === PARTITIONS / 2 && b.consuming.size === PARTITIONS / 2,
      'the partitions to be shared',
    );
    await nc.flush();
    assert.deepEqual(consumerRequests, []);
    await Promise.all([a.leases.stop(), b.leases.stop()]);
    // nats-server 2.10 has no batched direct get: the same keys, through one pass
    // (written again: the bucket's TTL may have expired them on a slow machine)
    await leases.kv.put('g5.member.a', 'x');
    await leases.kv.put('g5.member.host.example.org', 'x');
    assert.deepEqual(
      (
        await leaseBucketOf(leases.kv, nc, false, jsm, 'leases_listing').keysUnder('g5.member.')
      ).sort(),
      ['g5.member.a', 'g5.member.host.example.org'],
    );
    await nc.flush();
    tap.unsubscribe();
    assert.ok(consumerRequests.length > 0, 'the pass reads through a consumer');
    // that the server forgets within seconds (nats.js' ordered consumer: five minutes)
    assert.equal(consumersCreated.length, 1);
    const idle = consumersCreated[0]?.config?.inactive_threshold ?? Infinity;
    assert.ok(idle <= PASS_IDLE_MS * 1e6, `inactive for ${String(idle / 1e9)} s`);
  });
});
