// Reads what is in JetStream, for assertions.
import { Streams } from '@kubebus/shared/bus';
import { decodeNatsMessage, type KubeCloudEvent } from '@kubebus/shared/events';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

export interface StoredMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly headers: Record<string, string>;
}

/** Every message of `stream` matching `filter`, in stream order. */
export async function readStream(
  nc: NatsConnection,
  stream: string,
  filter?: string,
): Promise<StoredMessage[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  if (info.state.messages === 0) return [];
  const js = jetstream(nc);
  const consumer = await js.consumers.get(stream, {
    ...(filter === undefined ? {} : { filter_subjects: [filter] }),
    deliver_policy: DeliverPolicy.All,
  });
  const pending = (await consumer.info()).num_pending;
  const out: StoredMessage[] = [];
  if (pending === 0) return out;
  const messages = await consumer.consume();
  for await (const message of messages) {
    const headers: Record<string, string> = {};
    for (const key of message.headers?.keys() ?? []) headers[key] = message.headers?.get(key) ?? '';
    out.push({ subject: message.subject, seq: message.seq, data: message.data, headers });
    if (message.info.pending === 0) break;
  }
  await messages.close();
  return out;
}

/** The kube CloudEvents in KUBEBUS_EVENTS, decoded; throws on any malformed one. */
export async function readEvents(
  nc: NatsConnection,
  filter?: string,
): Promise<(KubeCloudEvent & { subjectOnBus: string })[]> {
  const messages = await readStream(nc, Streams.events, filter);
  return messages.map((message) => {
    const decoded = decodeNatsMessage(message.data, {
      keys: () => Object.keys(message.headers),
      get: (key) => message.headers[key] ?? '',
    });
    if (!decoded.ok) throw decoded.error;
    return { ...decoded.event, subjectOnBus: message.subject };
  });
}

/** The last message of each subject matching `filter` (all of a work-queue stream). */
export async function readLastPerSubject(
  nc: NatsConnection,
  stream: string,
  filter: string,
): Promise<StoredMessage[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  const out: StoredMessage[] = [];
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const message = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    if (message === null) continue;
    const headers: Record<string, string> = {};
    for (const key of message.header.keys()) headers[key] = message.header.get(key);
    out.push({ subject: message.subject, seq: message.seq, data: message.data, headers });
  }
  return out.sort((a, b) => a.seq - b.seq);
}
