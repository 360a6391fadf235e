// `kubebus tail`: changes as the watcher publishes them, one line each —
// time, operation, object, resourceVersion and generation, why it was sent,
// and the trace id to find its reconcile and status write in the logs.
import { Streams, encodeToken } from '@kubebus/shared/bus';
import { opOf, decodeNatsMessage } from '@kubebus/shared/events';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { safeField } from './terminal-safe.js';

export interface TailFilter {
  readonly resource?: string;
  readonly group?: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** kubebus.events.<group>.<resource>.<namespace>.<name>, wildcards where not given. */
export function tailSubject(filter: TailFilter): string {
  const token = (value: string | undefined) => (value === undefined ? '*' : encodeToken(value));
  const group = filter.resource === undefined ? '*' : token(filter.group ?? '');
  return `kubebus.events.${group}.${token(filter.resource)}.${token(filter.namespace)}.${token(filter.name)}`;
}

export interface TailLine {
  readonly time: string;
  readonly op: string;
  readonly object: string;
  readonly resourceVersion: string;
  readonly generation: number | undefined;
  readonly reason: string;
  readonly traceId: string | undefined;
}

/** Follows new changes until `signal` aborts, calling `print` for each. */
export async function tail(
  nc: NatsConnection,
  filter: TailFilter,
  print: (line: TailLine) => void,
  signal: AbortSignal,
): Promise<void> {
  const consumer = await jetstream(nc).consumers.get(Streams.events, {
    filter_subjects: [tailSubject(filter)],
    deliver_policy: DeliverPolicy.New,
  });
  const messages = await consumer.consume();
  const stop = () => void messages.close();
  signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const message of messages) {
      const decoded = decodeNatsMessage(message.data, message.headers);
      if (!decoded.ok) continue;
      const { event } = decoded;
      const where = event.namespace ? `${event.namespace}/${event.name}` : event.name;
      print({
        time: event.time ?? new Date().toISOString(),
        op: opOf(event),
        object: `${event.kbresource}${event.kbgroup === '' ? '' : `.${event.kbgroup}`}/${where}`,
        resourceVersion: event.kbrv,
        generation: event.kbgeneration,
        reason: event.kbreason,
        traceId: event.traceparent?.split('-')[1],
      });
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** One change per line; every field came off the bus, so each is printed terminal-safe. */
export function formatTailLine(line: TailLine): string {
  return safeField(
    [
      line.time,
      line.op.padEnd(6),
      line.object,
      `rv ${line.resourceVersion}`,
      ...(line.generation === undefined ? [] : [`generation ${line.generation}`]),
      `(${line.reason})`,
      ...(line.traceId === undefined ? [] : [`trace ${line.traceId}`]),
    ].join(' '),
  );
}
