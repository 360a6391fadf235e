// The leases' KV bucket, with its live keys listed by one batched direct get.
// nats.js' kv.keys() makes an ordered consumer for every listing, which the
// server keeps for five minutes after it is closed (runtime users may not
// delete consumers, ADR 0015): a lease round a second per replica left
// hundreds alive on the bucket's stream and could reach its consumer limit.
// nats-server 2.10 has no batched direct get: there, one pass through a
// consumer the server forgets seconds after (one-pass.ts).
import type { JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import { serverAtLeast } from './connect.js';
import { readMessages } from './history.js';
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
  return leaseBucketOf(await new Kvm(nc).open(name), nc, serverAtLeast(nc, '2.11.0'), jsm, name);
}

/** `batched`: keys listed by batched direct gets (nats-server >= 2.11); otherwise by one pass. */
export function leaseBucketOf(
  kv: KV,
  nc: NatsConnection,
  batched: boolean,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  name: string,
): LeaseBucket {
  const subjectPrefix = `$KV.${name}.`;
  const batchVia = batched ? nc : undefined;
  const slowly = async (prefix: string) => {
    const last = await readMessages(
      nc,
      `KV_${name}`,
      `${subjectPrefix}${prefix}>`,
      'last-per-subject',
    );
    return keysOf(last);
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
      return keysOf(found.values());
    },
  };

  function keysOf(
    lastOfEach: Iterable<{ readonly subject: string; readonly header: MsgHdrs | undefined }>,
  ) {
    const keys: string[] = [];
    for (const last of lastOfEach)
      if (!REMOVED.has(last.header?.get('KV-Operation') ?? ''))
        keys.push(last.subject.slice(subjectPrefix.length));
    return keys;
  }
}
