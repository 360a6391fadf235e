// What the watcher would publish for a revision of an object, put on
// KUBEBUS_EVENTS directly: the object reader's tests record revisions
// without a watcher or an apiserver.
import { subjects } from '@kubebus/shared/bus';
import { encodeBinary, kubeEvent, type ChangeOp, type KubeObject } from '@kubebus/shared/events';
import type { ResourceRef } from '@kubebus/shared/kube';
import type { JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';

/** Publishes the object's event; answers its stream sequence. */
export async function recordRevision(
  jsm: JetStreamManager,
  resource: ResourceRef,
  object: KubeObject,
  op: ChangeOp = 'update',
): Promise<number> {
  const event = kubeEvent({
    resource,
    object,
    op,
    reason: 'watch',
    source: 'https://apiserver',
    time: new Date(),
  });
  const { payload, headers } = encodeBinary(event);
  const h = natsHeaders();
  for (const [name, value] of Object.entries(headers)) h.set(name, value);
  const key = {
    group: resource.group,
    resource: resource.resource,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
  };
  const ack = await jsm.jetstream().publish(subjects.event(key), payload, { headers: h });
  return ack.seq;
}
