// The cluster's external resource: a NATS object-store bucket for its backups,
// named by the cluster's uid so creating it twice is impossible.
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Objm } from '@nats-io/obj';

export function bucketName(uid: string): string {
  return `kubebus-backups-${uid}`;
}

/** Object stores live in a stream named OBJ_<bucket>. */
const streamOf = (uid: string) => `OBJ_${bucketName(uid)}`;

export class BackupBuckets {
  readonly #objm: Objm;

  constructor(
    private readonly nc: NatsConnection,
    /** replicas of each bucket's stream: as many as kubebus' own streams */
    private readonly replicas = 1,
  ) {
    this.#objm = new Objm(nc);
  }

  async exists(uid: string): Promise<boolean> {
    try {
      await (await jetstreamManager(this.nc)).streams.info(streamOf(uid));
      return true;
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
        return false;
      throw error;
    }
  }

  /** Creates the bucket unless it exists; says which. */
  async ensure(uid: string): Promise<'created' | 'exists'> {
    if (await this.exists(uid)) return 'exists';
    await this.#objm.create(bucketName(uid), {
      description: `backups of DatabaseCluster ${uid}`,
      replicas: this.replicas,
    });
    return 'created';
  }

  /** Removes the bucket; absent is fine (the finalizer may run twice). */
  async remove(uid: string): Promise<'removed' | 'absent'> {
    if (!(await this.exists(uid))) return 'absent';
    await (await this.#objm.open(bucketName(uid))).destroy();
    return 'removed';
  }
}
