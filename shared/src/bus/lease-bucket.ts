// The leases' KV bucket, with its live keys listed by one batched direct get.
// nats.js' kv.keys() makes an ordered consumer for every listing, which the
// server keeps for five minutes after it is closed (runtime users may not
// delete consumers, ADR 0015): a lease round a second per replica left
// hundreds alive on the bucket's stream and could reach its consumer limit.
// nats-server 2.10 has no batched direct get: there, kv.keys() it is.
import type { JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { serverAtLeast } from './connect.js';
import type { AnswerGatherer } from './inbox-requests.js';
import { lastMessagesFor } from './last-messages.js';

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
  const batchVia = serverAtLeast(nc, '2.11.0') ? nc : undefined;
  return leaseBucketOf(await new Kvm(nc).open(name), batchVia, jsm, name);
}

/** `batchVia`: where batched direct gets go (nats-server >= 2.11); without it, kv.keys(). */
export function leaseBucketOf(
  kv: KV,
  batchVia: NatsConnection | AnswerGatherer | undefined,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  name: string,
): LeaseBucket {
  const subjectPrefix = `$KV.${name}.`;
  const slowly = async (prefix: string) => {
    const keys: string[] = [];
    for await (const key of await kv.keys(`${prefix}>`)) keys.push(key);
    return keys;
  };
  return {
    kv,
    async keysUnder(prefix) {
      if (batchVia === undefined) return slowly(prefix);
      let found;
      try {
        found = await lastMessagesFor(batchVia, jsm, `KV_${name}`, [`${subjectPrefix}${prefix}>`]);
      } catch {
        // more keys than one batch answers (IncompleteBatch), or a server that cannot answer
        // one (an older replica mid-upgrade, a reconnect to 2.10): the slow listing, complete
        return slowly(prefix);
      }
      const keys: string[] = [];
      for (const last of found.values())
        if (!REMOVED.has(last.header?.get('KV-Operation') ?? ''))
          keys.push(last.subject.slice(subjectPrefix.length));
      return keys;
    },
  };
}
