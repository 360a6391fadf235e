// The leases' KV bucket, with its live keys listed by one batched direct get.
// nats.js' kv.keys() makes an ordered consumer for every listing, which the
// server keeps for five minutes after it is closed (runtime users may not
// delete consumers, ADR 0015): a lease round a second per replica left
// hundreds alive on the bucket's stream and could reach its consumer limit.
import type { JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { IncompleteBatch, lastMessagesFor } from './last-messages.js';

export interface LeaseBucket {
  readonly kv: KV;
  /** The keys under `prefix` (ending with a dot) that hold a value now, not deleted or purged. */
  keysUnder(prefix: string): Promise<string[]>;
}

/** KV operations that leave a key without a value (the key's last message is a marker). */
const REMOVED = new Set(['DEL', 'PURGE']);

export async function openLeaseBucket(
  nc: NatsConnection,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  name: string,
): Promise<LeaseBucket> {
  return leaseBucketOf(await new Kvm(nc).open(name), nc, jsm, name);
}

export function leaseBucketOf(
  kv: KV,
  nc: Pick<NatsConnection, 'requestMany'>,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  name: string,
): LeaseBucket {
  const subjectPrefix = `$KV.${name}.`;
  return {
    kv,
    async keysUnder(prefix) {
      let found;
      try {
        found = await lastMessagesFor(nc, jsm, `KV_${name}`, [`${subjectPrefix}${prefix}>`]);
      } catch (error) {
        // more keys than one batch answers: the slow listing, still complete
        if (!(error instanceof IncompleteBatch)) throw error;
        const keys: string[] = [];
        for await (const key of await kv.keys(`${prefix}>`)) keys.push(key);
        return keys;
      }
      const keys: string[] = [];
      for (const last of found.values())
        if (!REMOVED.has(last.header?.get('KV-Operation') ?? ''))
          keys.push(last.subject.slice(subjectPrefix.length));
      return keys;
    },
  };
}
