// Partition ownership with no leader: each replica heartbeats a member key and
// holds leases on partitions in a KV bucket whose TTL expires the keys of a
// replica that dies. Leases are taken with compare-and-set (create), renewed
// with update-at-revision, and balanced to ceil(partitions / members) each.
import type { KV } from '@nats-io/kv';
import type { Logger } from '../obs/logger.js';

export interface PartitionLeaseOptions {
  /** the group sharing partitions (a controller, or the status writer) */
  readonly group: string;
  readonly replicaId: string;
  readonly partitions: number;
  /** renewal interval; must be well under the bucket's TTL */
  readonly renewEveryMs: number;
  readonly log: Logger;
  /** start consuming the partition */
  readonly onAcquired: (partition: number) => Promise<void>;
  /** stop consuming it and finish its work; the lease is released afterwards */
  readonly onReleasing: (partition: number) => Promise<void>;
  /** the lease was taken away (expired): stop at once */
  readonly onLost: (partition: number) => void;
}

export class PartitionLeases {
  readonly #held = new Map<number, number>(); // partition → KV revision
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly kv: KV,
    private readonly options: PartitionLeaseOptions,
  ) {}

  /** The partitions this replica holds now. */
  get held(): number[] {
    return [...this.#held.keys()].sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    await this.#tick();
    this.#schedule();
  }

  /** Releases every lease after its work is finished (graceful hand-over). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#ticking;
    for (const partition of this.held) await this.#release(partition);
    await this.kv.delete(this.#memberKey()).catch(() => undefined);
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
    try {
      await this.kv.put(this.#memberKey(), new Date().toISOString());
      await this.#renew();
      const members = await this.#members();
      const fairShare = Math.ceil(this.options.partitions / Math.max(1, members.length));
      if (this.#held.size > fairShare) {
        for (const partition of this.held.slice(fairShare)) await this.#release(partition);
      } else if (this.#held.size < fairShare) {
        await this.#acquire(fairShare, members);
      }
    } catch (error) {
      this.options.log.warn({ err: error }, 'partition lease round failed; will retry');
    }
  }

  async #renew(): Promise<void> {
    for (const [partition, revision] of [...this.#held]) {
      try {
        this.#held.set(
          partition,
          await this.kv.update(this.#leaseKey(partition), this.options.replicaId, revision),
        );
      } catch (error) {
        // Expired, and possibly taken by another replica: stop at once.
        this.#held.delete(partition);
        this.options.log.warn({ partition, err: error }, 'partition lease lost');
        this.options.onLost(partition);
      }
    }
  }

  async #acquire(fairShare: number, members: string[]): Promise<void> {
    // Start at a replica-specific offset so replicas do not race for the same keys.
    const offset = Math.max(0, members.indexOf(this.options.replicaId));
    const start = Math.floor((offset * this.options.partitions) / Math.max(1, members.length));
    for (let i = 0; i < this.options.partitions && this.#held.size < fairShare; i++) {
      const partition = (start + i) % this.options.partitions;
      if (this.#held.has(partition)) continue;
      let revision: number;
      try {
        revision = await this.kv.create(this.#leaseKey(partition), this.options.replicaId);
      } catch {
        continue; // held by another replica
      }
      this.#held.set(partition, revision);
      this.options.log.info({ partition }, 'partition acquired');
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

  async #release(partition: number): Promise<void> {
    const revision = this.#held.get(partition);
    if (revision === undefined) return;
    await this.options.onReleasing(partition);
    this.#held.delete(partition);
    await this.kv
      .delete(this.#leaseKey(partition), { previousSeq: revision })
      .catch(() => undefined);
    this.options.log.info({ partition }, 'partition released');
  }

  async #members(): Promise<string[]> {
    const members: string[] = [];
    const prefix = `${this.options.group}.member.`;
    for await (const key of await this.kv.keys(`${prefix}*`))
      members.push(key.slice(prefix.length));
    if (!members.includes(this.options.replicaId)) members.push(this.options.replicaId);
    return members.sort();
  }

  #memberKey(): string {
    return `${this.options.group}.member.${this.options.replicaId}`;
  }

  #leaseKey(partition: number): string {
    return `${this.options.group}.lease.p${partition}`;
  }
}
