// A requeue, as the reconciler's own timers make one (a requeue-after, a
// retry): a work mark with reason `requeue` published straight to
// KUBEBUS_WORK. The lagging schedule reconciles with it while the watcher's
// feed is held — the watcher, which marks the work for every change, being
// what is held. The mark carries only the key: the reconcile reads the
// object from the bus, as it stands. It is handled once the work queue no
// longer holds it (acknowledged after the reconcile, or one the runtime
// skipped: what the recording operator never sees).
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { encodeWorkMark, partitionOf, Streams, subjects } from '@kubebus/shared/bus';
import type { Operator } from '@kubebus/shared/definition';
import type { ObjectKey } from '@kubebus/shared/runtime';
import { partitionsOf } from '../host/role-configs.js';

/** Publishes the mark; answers whether it is handled yet, to poll. */
export async function requeue(
  nc: NatsConnection,
  operator: Operator,
  key: ObjectKey,
): Promise<() => Promise<boolean>> {
  const subject = subjects.work(operator.name, partitionOf(key, partitionsOf(operator)), key);
  const time = new Date().toISOString();
  await jetstream(nc).publish(subject, encodeWorkMark({ key, reason: 'requeue', time }), {
    // one pending mark per object: a later one replaces an earlier, never a duplicate id
    msgID: `requeue/${key.namespace}/${key.name}/${time}`,
  });
  const jsm = await jetstreamManager(nc);
  return async () =>
    (await jsm.streams.getMessage(Streams.work, { last_by_subj: subject })) === null;
}
