// Upgrades reach every object. controller-runtime re-reconciles every object
// when a new version starts (its informers' initial list); kubebus has no
// such list, so the reconciler does it per partition: when it takes a
// partition whose objects were last swept by another version of the
// operator, it marks every object of that partition dirty. The marks go to
// the partition it now holds, so the new code reconciles them, paced by the
// usual work queue and throttle, one reconcile per key as always — and a
// rolling update sweeps each partition once more per version, whoever held it.
// A repartition (agreements.ts) sweeps every partition again: the objects moved.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { decodeNatsMessage } from '../events/nats-binding.js';
import { keyOfEvent, opOf } from '../events/kube-event.js';
import type { ObjectKey } from '../kube/refs.js';
import type { Logger } from '../obs/logger.js';
import { startTrace } from '../obs/trace.js';
import { agreementKeys } from './agreements.js';
import { readMessages } from './history.js';
import { partitionOf, subjects } from './subjects.js';
import { Streams } from './topology.js';
import { encodeWorkMark } from './work-mark.js';

/** What a sweep logs (tests look for it). */
export const SWEPT = 'upgrade sweep: every object of the partition is reconciled again';

/** The agreements key recording which version last swept a partition. */
export const sweepKey = agreementKeys.sweep;

export interface SweepDeps {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  /** the agreements bucket */
  readonly agreements: KV;
  readonly controller: string;
  /** this process's version of the operator */
  readonly version: string;
  readonly partitions: number;
  readonly primary: Pick<ObjectKey, 'group' | 'resource'>;
  /**
   * The primary's objects from the apiserver (a metadata-only list): every
   * one, where the bus keeps only those changed within its retention. When
   * it fails (no list permission), the bus' records are swept instead.
   */
  readonly listLive?: () => Promise<{ key: ObjectKey; uid: string }[]>;
  readonly log: Logger;
}

/** The live objects of the primary resource: from the apiserver if it may, else the bus' records. */
async function primaryObjects(deps: SweepDeps): Promise<{ key: ObjectKey; uid: string }[]> {
  if (deps.listLive !== undefined) {
    try {
      return await deps.listLive();
    } catch (error) {
      // an answer, not a fault of kubebus: one line, no stack (a 404 is upgrade step 3,
      // a version whose CRD is not applied yet)
      const status = (error as { status?: unknown } | null)?.status;
      deps.log.warn(
        { reason: error instanceof Error ? error.message.split('\n', 1)[0] : String(error) },
        status === 404
          ? 'upgrade sweep: the apiserver does not serve this version of the primary yet (its CRD is applied after the reconcilers); sweeping what the bus recorded'
          : 'upgrade sweep: cannot list the primary from the apiserver; sweeping what the bus recorded',
      );
    }
  }
  const messages = await readMessages(
    deps.nc,
    Streams.events,
    subjects.eventsOf(deps.primary),
    'last-per-subject',
  );
  return messages.flatMap((message) => {
    const decoded = decodeNatsMessage(message.data, undefined);
    if (!decoded.ok || opOf(decoded.event) === 'delete') return [];
    return [{ key: keyOfEvent(decoded.event), uid: decoded.event.kbuid }];
  });
}

/**
 * What a sweep record names (JSON, as every agreement is): the version, and
 * the partition count it swept under — a repartition moves objects to other
 * partitions, so it sweeps again even with the same version (a record
 * without a count predates it: swept again too).
 */
function sweptBy(text: string): { version?: string; partitions?: number } {
  try {
    const { version, partitions } = JSON.parse(text) as { version?: unknown; partitions?: unknown };
    return {
      ...(typeof version === 'string' ? { version } : {}),
      ...(typeof partitions === 'number' ? { partitions } : {}),
    };
  } catch {
    return {};
  }
}

export class UpgradeSweeper {
  /**
   * One read of the primary's objects for the partitions taken together (at
   * start, a rebalance): it serves only partitions taken before it started.
   * A read older than the partition would miss an object created since and
   * already reconciled by the partition's previous holder — an older version.
   */
  #objects: { read: Promise<{ key: ObjectKey; uid: string }[]>; at: number } | undefined;

  constructor(private readonly deps: SweepDeps) {}

  /** Sweeps the partition unless this version already did; the number of objects marked. */
  async onAcquired(partition: number): Promise<number> {
    const { deps } = this;
    const acquired = Date.now();
    const key = sweepKey(deps.controller, partition);
    const recorded = await deps.agreements.get(key);
    const swept = recorded?.operation === 'PUT' ? sweptBy(recorded.string()) : {};
    const previous = swept.version;
    if (previous === deps.version && swept.partitions === deps.partitions) return 0;
    if (this.#objects === undefined || this.#objects.at < acquired) {
      const read = primaryObjects(deps);
      this.#objects = { read, at: Date.now() };
      // a failed read is not reused by the partitions taken next
      read.catch(() => {
        if (this.#objects?.read === read) this.#objects = undefined;
      });
    }
    const inPartition = (await this.#objects.read).filter(
      (object) => partitionOf(object.key, deps.partitions) === partition,
    );
    // Replicas sweeping at once send one mark per object (the id dedupes); a sweep
    // after another version's (an old replica took the partition back) is a new one.
    const round = recorded?.revision ?? 0;
    for (const { key: objectKey, uid } of inPartition) {
      const traceparent = startTrace();
      await deps.js.publish(
        subjects.work(deps.controller, partition, objectKey),
        encodeWorkMark({
          key: objectKey,
          reason: 'upgrade',
          traceparent,
          time: new Date().toISOString(),
        }),
        { msgID: `${deps.controller}/upgrade/${deps.version}/${round}/${uid}` },
      );
    }
    await deps.agreements.put(
      key,
      JSON.stringify({
        version: deps.version,
        partitions: deps.partitions,
        at: new Date().toISOString(),
      }),
    );
    deps.log.info(
      {
        partition,
        version: deps.version,
        previous,
        partitions: deps.partitions,
        previousPartitions: swept.partitions,
        marked: inPartition.length,
      },
      SWEPT,
    );
    return inPartition.length;
  }
}
