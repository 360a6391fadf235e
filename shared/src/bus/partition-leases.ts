// Partition ownership with no leader: each replica heartbeats a member key and
// holds leases on partitions in a KV bucket whose TTL expires the keys of a
// replica that dies. Leases are taken with compare-and-set (create), renewed
// with update-at-revision, and balanced to ceil(partitions / members) each.
//
// Two rules keep two replicas off one partition (docs/adr/0005):
// - renewal never waits: hand-overs run beside the renewal loop, not in it;
// - fencing: a replica trusts a lease only until half its TTL after the renewal
//   was *sent*; past that it revokes the partition itself, so it has stopped
//   long before the server can expire the key and give it to someone else.
//
// Two live processes given one replica id (two `kubebus run` on one host
// share its name) would share one member key: each would count one member,
// one would take every partition and the other idle, invisible to both and
// to repartitioning. The member key says which process wrote it: a process
// that finds another one renewing it takes part under a name of its own
// (`<id>-<instance>`) and says so.
import { randomBytes } from 'node:crypto';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { Logger } from '../obs/logger.js';
import type { LeaseBucket } from './lease-bucket.js';

/**
 * The groups sharing partitions: a controller's reconcilers, its status
 * writers. Each starts with the controller's name, so the operator's NATS
 * users may write `$KV.kubebus_leases.<controller>.>` and no other's leases.
 */
export const leaseGroups = {
  work: (controller: string) => `${controller}.work`,
  status: (controller: string) => `${controller}.status`,
} as const;

/** The key of a partition's lease: `<group>.lease.p<n>` (members: `<group>.member.<replica>`). */
export const leaseKey = (group: string, partition: number) => `${group}.lease.p${partition}`;

export interface PartitionLeaseOptions {
  /** the group sharing partitions (leaseGroups) */
  readonly group: string;
  readonly replicaId: string;
  readonly partitions: number;
  /** renewal interval; must be well under the bucket's TTL */
  readonly renewEveryMs: number;
  /** the bucket's TTL: the server expires a lease this long after its last renewal */
  readonly ttlMs: number;
  readonly log: Logger;
  /** start consuming the partition */
  readonly onAcquired: (partition: number) => Promise<void>;
  /** stop consuming it and finish its work; the lease is released afterwards */
  readonly onReleasing: (partition: number) => Promise<void>;
  /** the lease cannot be trusted any more: stop at once, abort running work */
  readonly onLost: (partition: number) => void;
  /** monotonic clock (ms); injectable for tests */
  readonly now?: () => number;
  /** which process this is (default: one random name per process, shared by its roles) */
  readonly instance?: string;
}

/** This process among others given the same replica id; its roles take part under one name. */
export const PROCESS_INSTANCE = randomBytes(4).toString('hex');

interface Lease {
  revision: number;
  /** monotonic time until which this replica may act on the partition */
  trustedUntil: number;
}

export class PartitionLeases {
  readonly #held = new Map<number, Lease>();
  readonly #releasing = new Map<number, Promise<void>>();
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #fence: NodeJS.Timeout | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #stopped = false;
  /** stopping: rounds only renew what is still held, they take nothing new */
  #stopping = false;

  readonly #bucket: LeaseBucket;
  /** this process, in its member key's value: another writing it is another process */
  readonly #instance: string;
  /** the name this replica takes part under: the replica id, unless another process has it */
  #memberId: string;
  /** the revision of the member key this process last wrote */
  #memberSeen: number | undefined;
  /** another process' value found in the member key: its revision, and since when (monotonic) */
  #foreign: { revision: number; since: number } | undefined;

  constructor(
    bucket: LeaseBucket,
    private readonly options: PartitionLeaseOptions,
  ) {
    this.#bucket = bucket;
    if (options.renewEveryMs * 3 > options.ttlMs) {
      throw new KubebusError(
        ErrorCodes.InvalidConfig,
        `KUBEBUS_LEASE_RENEW ${options.renewEveryMs} ms is too slow for the ${options.ttlMs} ms lease TTL: renew at least three times per TTL (at most ${Math.floor(options.ttlMs / 3)} ms)`,
      );
    }
    this.#now = options.now ?? (() => performance.now());
    this.#memberId = options.replicaId;
    this.#instance = options.instance ?? PROCESS_INSTANCE;
  }

  /** The name this replica takes part under (the replica id, unless another live process has it). */
  get memberId(): string {
    return this.#memberId;
  }

  /** The partitions this replica holds now. */
  get held(): number[] {
    return [...this.#held.keys()].sort((a, b) => a - b);
  }

  /** Whether this replica may act on the partition now (fenced by the local deadline). */
  holds(partition: number): boolean {
    const lease = this.#held.get(partition);
    return lease !== undefined && this.#now() < lease.trustedUntil;
  }

  async start(): Promise<void> {
    await this.#tick();
    this.#schedule();
    this.#fence = setInterval(
      () => {
        this.#enforceDeadlines();
      },
      Math.max(50, Math.floor(this.options.renewEveryMs / 2)),
    );
    this.#fence.unref();
  }

  /**
   * Releases every lease after its work is finished (graceful hand-over). The
   * leases are renewed, and fenced, until each is released: work that
   * outlasts the TTL must not find its partition taken by another replica.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#ticking; // a round under way may still take a partition: released below too
    await Promise.all(this.held.map((partition) => this.#release(partition)));
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#fence);
    await this.#ticking;
    await this.#bucket.kv.delete(this.#memberKey()).catch(() => undefined);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#ticking = this.#tick().finally(() => {
        this.#schedule();
      });
    }, this.options.renewEveryMs);
  }

  async #tick(): Promise<void> {
    this.#enforceDeadlines();
    try {
      if (this.#stopping) {
        await this.#renew();
        return;
      }
      // a key another process still writes: not this one's to take part under.
      // Asked beside the renewals, never in front of them (a slow or failed get
      // must not fence what is held)
      const [taken] = await Promise.all([
        answeredWithin(this.#memberKeyTaken(), this.options.renewEveryMs / 2).catch(
          (error: unknown) => {
            // unknown: taken part in as before; a bus that cannot answer fails the put below
            this.options.log.debug({ err: error }, 'could not read this replica’s member key');
            return false;
          },
        ),
        this.#renew(),
      ]);
      if (taken) return;
      const sentAt = this.#now();
      this.#memberSeen = await this.#bucket.kv.put(
        this.#memberKey(),
        JSON.stringify({ at: new Date().toISOString(), instance: this.#instance }),
      );
      if (this.#now() - sentAt > this.options.ttlMs / 2) return; // too slow to trust a new lease
      const members = await this.#members();
      const fairShare = shareOf(this.options.partitions, members, this.#memberId);
      const keep = this.held.filter((partition) => !this.#releasing.has(partition));
      if (keep.length > fairShare) {
        // Hand-overs wait for running work; they run beside the renewals, never in front.
        for (const partition of keep.slice(fairShare)) void this.#release(partition);
      } else if (keep.length < fairShare) {
        await this.#acquire(fairShare, members);
      }
    } catch (error) {
      this.options.log.warn({ err: error }, 'partition lease round failed; will retry');
    }
  }

  #enforceDeadlines(): void {
    for (const [partition, lease] of [...this.#held]) {
      if (this.#now() < lease.trustedUntil) continue;
      this.#held.delete(partition);
      this.options.log.warn({ partition }, 'partition lease not renewed in time; stopped (fenced)');
      this.options.onLost(partition);
    }
  }

  async #renew(): Promise<void> {
    await Promise.all(
      [...this.#held].map(async ([partition, lease]) => {
        const sentAt = this.#now();
        try {
          const revision = await this.#bucket.kv.update(
            this.#leaseKey(partition),
            this.#memberId,
            lease.revision,
          );
          if (this.#held.get(partition) !== lease) return; // fenced or released meanwhile
          lease.revision = revision;
          lease.trustedUntil = sentAt + this.options.ttlMs / 2;
        } catch (error) {
          if (this.#held.get(partition) !== lease) return;
          // Expired, and possibly taken by another replica: stop at once.
          this.#held.delete(partition);
          this.options.log.warn({ partition, err: error }, 'partition lease lost');
          this.options.onLost(partition);
        }
      }),
    );
  }

  async #acquire(fairShare: number, members: string[]): Promise<void> {
    // Start at a replica-specific offset so replicas do not race for the same keys.
    const offset = Math.max(0, members.indexOf(this.#memberId));
    const start = Math.floor((offset * this.options.partitions) / Math.max(1, members.length));
    for (let i = 0; i < this.options.partitions && this.#held.size < fairShare; i++) {
      const partition = (start + i) % this.options.partitions;
      if (this.#held.has(partition)) continue;
      const sentAt = this.#now();
      let revision: number;
      try {
        revision = await this.#bucket.kv.create(this.#leaseKey(partition), this.#memberId);
      } catch {
        continue; // held by another replica
      }
      this.#held.set(partition, { revision, trustedUntil: sentAt + this.options.ttlMs / 2 });
      this.options.log.debug({ partition }, 'partition acquired');
      try {
        await this.options.onAcquired(partition);
      } catch (error) {
        this.options.log.error(
          { partition, err: error },
          'could not start the partition; releasing it',
        );
        await this.#release(partition);
      }
    }
  }

  #release(partition: number): Promise<void> {
    const releasing = this.#releasing.get(partition);
    if (releasing !== undefined) return releasing;
    const done = this.#handOver(partition).finally(() => this.#releasing.delete(partition));
    this.#releasing.set(partition, done);
    return done;
  }

  async #handOver(partition: number): Promise<void> {
    if (!this.#held.has(partition)) return;
    try {
      await this.options.onReleasing(partition);
    } catch (error) {
      this.options.log.warn({ partition, err: error }, 'hand-over did not finish cleanly');
    }
    const lease = this.#held.get(partition);
    if (lease === undefined) return; // fenced meanwhile: the key expires by itself
    this.#held.delete(partition);
    await this.#bucket.kv
      .delete(this.#leaseKey(partition), { previousSeq: lease.revision })
      .catch(() => undefined);
    this.options.log.debug({ partition }, 'partition released');
  }

  async #members(): Promise<string[]> {
    // A set: a key updated while the listing runs can be listed twice, and a
    // member counted twice would shrink everyone's share (needless hand-overs).
    const members = new Set([this.#memberId]);
    const prefix = `${this.options.group}.member.`;
    for (const key of await this.#bucket.keysUnder(prefix)) members.add(key.slice(prefix.length));
    return [...members].sort();
  }

  /**
   * Whether another process holds this replica's member key. Its own key is
   * written by this process; another's value found there is a live process
   * if it is written again while this one watches — a process that died
   * leaves its key only until the TTL, unrenewed, and is waited out for a few
   * renewals. A live one found, this replica takes a name of its own.
   */
  async #memberKeyTaken(): Promise<boolean> {
    const entry = await this.#bucket.kv.get(this.#memberKey());
    if (entry === null || entry.operation !== 'PUT') return false;
    if (memberInstanceOf(entry.string()) === this.#instance) {
      this.#foreign = undefined;
      return false;
    }
    const seen = this.#memberSeen;
    // older than this process' own write: a replica behind its leader answered
    if (seen !== undefined && entry.revision <= seen) return false;
    const foreign = this.#foreign;
    // written over this process' own since it last wrote, or again while watched: live
    const live = seen !== undefined || (foreign !== undefined && entry.revision > foreign.revision);
    if (!live) {
      if (foreign === undefined) {
        this.#foreign = { revision: entry.revision, since: this.#now() };
        return true;
      }
      // not renewed for a few rounds: a process that died; its key is this one's
      if (this.#now() - foreign.since > 2.5 * this.options.renewEveryMs) {
        this.#foreign = undefined;
        return false;
      }
      return true;
    }
    const shared = this.#memberId;
    this.#memberId = `${this.options.replicaId}-${this.#instance}`;
    this.#memberSeen = undefined;
    this.#foreign = undefined;
    this.options.log.warn(
      { replicaId: this.options.replicaId, memberId: this.#memberId, group: this.options.group },
      `another live process is replica "${shared}" of ${this.options.group} (two processes on one host share its name): this one takes part as "${this.#memberId}"; give each its own KUBEBUS_REPLICA_ID`,
    );
    return false;
  }

  #memberKey(): string {
    return `${this.options.group}.member.${this.#memberId}`;
  }

  #leaseKey(partition: number): string {
    return leaseKey(this.options.group, partition);
  }
}

/** `answer`, or false (not known to be taken) if it does not come within `ms`. */
async function answeredWithin(answer: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The process that wrote a member key's value; undefined for a value without one (an older version's). */
export function memberInstanceOf(value: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && 'instance' in parsed
      ? String(parsed.instance)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How many partitions a member holds: an equal share, the remainder one each
 * to the first members in name order — exactly the partitions between them,
 * so no member waits idle while another holds one more than its share (4
 * partitions over 3 replicas: 2, 1, 1, where the rounded-up share let two
 * replicas hold 2 each and the third none). `members` is sorted.
 */
export function shareOf(partitions: number, members: readonly string[], member: string): number {
  const count = Math.max(1, members.length);
  const rank = Math.max(0, members.indexOf(member));
  return Math.floor(partitions / count) + (rank < partitions % count ? 1 : 0);
}
