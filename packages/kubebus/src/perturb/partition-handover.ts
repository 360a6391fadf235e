// The handover schedule's lease move: the object's work partition taken from
// the instance that holds it — its lease key deleted, as the server's TTL
// deletes the lease of an instance that stopped renewing it — once a second
// instance has joined, so that one takes it: the instance that lost it holds
// more than its share and takes nothing back (partition-leases.ts) — unless
// it has not counted the second among the members yet, and the key is then
// taken from it again until the second instance holds it.
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { connectionOf } from '@kubebus/cli/commands';
import { Buckets, leaseGroups, leaseKey } from '@kubebus/shared/bus';

/** How long the second instance may take to pick the partition up (it renews every 500 ms). */
const TAKEN_WITHIN_MS = 20_000;

export class PartitionHandOver {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly leases: KV,
  ) {}

  /** Connects as a kubebus client with these variables would (the test environment's natsEnv). */
  static async connect(natsEnv: Readonly<Record<string, string>>): Promise<PartitionHandOver> {
    const nc = await connect(connectionOf({}, natsEnv).options);
    try {
      return new PartitionHandOver(nc, await new Kvm(nc).open(Buckets.leases));
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  /** Who holds the controller's work partition now (a replica id), if anyone. */
  async holder(controller: string, partition: number): Promise<string | undefined> {
    const entry = await this.leases.get(leaseKey(leaseGroups.work(controller), partition));
    return entry?.operation === 'PUT' ? entry.string() : undefined;
  }

  /**
   * Takes the partition from its holder; answers whether `to` holds it
   * within the bound (else who does, or that no one does).
   */
  async move(controller: string, partition: number, to: string): Promise<true | string> {
    const key = leaseKey(leaseGroups.work(controller), partition);
    const deadline = Date.now() + TAKEN_WITHIN_MS;
    for (;;) {
      const entry = await this.leases.get(key);
      const holder = entry?.operation === 'PUT' ? entry.string() : undefined;
      if (holder === to) return true;
      if (Date.now() > deadline)
        return `partition ${partition} went to ${holder ?? 'no one'}, not to the second instance`;
      // held by another: taken away (again — the first instance takes it back when it has
      // not yet counted the second among the members, whose fair share it then is)
      if (entry?.operation === 'PUT')
        await this.leases.delete(key, { previousSeq: entry.revision }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
