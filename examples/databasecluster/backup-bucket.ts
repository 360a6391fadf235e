// The cluster's external resource: a NATS object-store bucket for its backups,
// named by the cluster's uid so creating it twice is impossible.
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstreamManager,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Objm } from '@nats-io/obj';

export function bucketName(uid: string): string {
  return `kubebus-backups-${uid}`;
}

/** Object stores live in a stream named OBJ_<bucket>. */
const streamOf = (uid: string) => `OBJ_${bucketName(uid)}`;

/**
 * The stream of an object store, as NATS lays it out (ADR-20) and as
 * `Objm.create` makes it. Created here with one request: `Objm.create` asks
 * for the account and the stream first (three requests on the JetStream API,
 * which every bucket creation of the cluster queues on), and `ensure` has
 * already asked whether it exists. `Objm.open` reads it as any other bucket.
 */
function bucketStream(uid: string, replicas: number): Partial<StreamConfig> & { name: string } {
  const bucket = bucketName(uid);
  return {
    name: streamOf(uid),
    description: `backups of DatabaseCluster ${uid}`,
    subjects: [`$O.${bucket}.C.>`, `$O.${bucket}.M.>`],
    max_age: 0,
    num_replicas: replicas,
    discard: DiscardPolicy.New,
    allow_direct: true,
    allow_rollup_hdrs: true,
  };
}

export class BackupBuckets {
  readonly #objm: Objm;
  /** one manager (its creation asks the server for the account: a request) */
  #jsm: Promise<JetStreamManager> | undefined;
  /**
   * Buckets this process saw existing, and when: a reconcile does not ask
   * again within `recheckMs` (a bucket removed by hand is re-created then).
   */
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly nc: NatsConnection,
    /** replicas of each bucket's stream: as many as kubebus' own streams */
    private readonly replicas = 1,
    private readonly recheckMs = 10 * 60_000,
  ) {
    this.#objm = new Objm(nc);
  }

  #manager(): Promise<JetStreamManager> {
    // a failed attempt (NATS down) is not remembered
    this.#jsm ??= jetstreamManager(this.nc).catch((error: unknown) => {
      this.#jsm = undefined;
      throw error;
    });
    return this.#jsm;
  }

  async exists(uid: string): Promise<boolean> {
    try {
      await (await this.#manager()).streams.info(streamOf(uid));
      return true;
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
        return false;
      throw error;
    }
  }

  /** Creates the bucket unless it exists (two requests when it does not); says which. */
  async ensure(uid: string): Promise<'created' | 'exists'> {
    const seen = this.#seen.get(uid);
    if (seen !== undefined && performance.now() - seen < this.recheckMs) return 'exists';
    if (await this.exists(uid)) {
      this.#seen.set(uid, performance.now());
      return 'exists';
    }
    // the same configuration twice is no error: a racing creator finds it made
    await (await this.#manager()).streams.add(bucketStream(uid, this.replicas));
    this.#seen.set(uid, performance.now());
    return 'created';
  }

  /** Removes the bucket; absent is fine (the finalizer may run twice). */
  async remove(uid: string): Promise<'removed' | 'absent'> {
    this.#seen.delete(uid);
    if (!(await this.exists(uid))) return 'absent';
    await (await this.#objm.open(bucketName(uid))).destroy();
    return 'removed';
  }
}
