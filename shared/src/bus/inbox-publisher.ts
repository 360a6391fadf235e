// JetStream publishes acknowledged on the connection's inbox for the hot
// path (inbox-requests.ts): a quarter of js.publish's CPU. The watcher
// publishes two per change (the event and its work mark), ~16 per object
// created.
//
// The same contract as js.publish for what the watcher relies on: the
// stream's refusal is a JetStreamApiError (a full stream is retried, see
// topology-limits.ts); no stream answering, no answer in time and a closed
// connection are NATS being unavailable (inbox-requests.ts): retried.
import { JetStreamApiError, type ApiError } from '@nats-io/jetstream';
import {
  headers as natsHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/nats-core';
import { InboxRequests, NoResponders } from './inbox-requests.js';

export interface StoredAck {
  readonly stream: string;
  readonly seq: number;
  readonly duplicate: boolean;
}

export interface StorePublishOptions {
  /** Nats-Msg-Id: the stream stores one message per id within its duplicate window */
  readonly msgID: string;
  readonly headers?: MsgHdrs;
  /** how long to wait for the stream's acknowledgement */
  readonly timeout: number;
}

/** What publishes a message and waits for a stream to store it (js.publish fits too). */
export interface StorePublisher {
  publish(subject: string, payload: Uint8Array, options: StorePublishOptions): Promise<StoredAck>;
}

interface AckBody {
  readonly stream?: string;
  readonly seq?: number;
  readonly duplicate?: boolean;
  readonly error?: ApiError;
}

const decoder = new TextDecoder();

export class InboxPublisher implements StorePublisher {
  constructor(private readonly nc: NatsConnection) {}

  // async: a connection closed meanwhile rejects (nats.js throws on subscribe), never throws
  async publish(
    subject: string,
    payload: Uint8Array,
    options: StorePublishOptions,
  ): Promise<StoredAck> {
    const headers = options.headers ?? natsHeaders();
    headers.set('Nats-Msg-Id', options.msgID);
    // looked up each time: a subscription that ended is replaced (inbox-requests.ts)
    return InboxRequests.of(this.nc).gather(
      subject,
      payload,
      {
        headers,
        timeoutMs: options.timeout,
        timedOut: () => `no acknowledgement from JetStream for ${subject} in time`,
      },
      (answer) => ackOf(subject, answer),
    );
  }
}

/** The stream's acknowledgement, or why it is none (thrown). */
function ackOf(subject: string, answer: Msg): StoredAck {
  const status = answer.headers?.code ?? 0;
  if (status === 503)
    // no stream listens on the subject (JetStream not ready, the stream missing)
    throw new NoResponders(`no JetStream stream stored ${subject}: 503`);
  if (status >= 300 && answer.data.byteLength === 0)
    throw new Error(`no JetStream acknowledgement of ${subject}: ${answer.headers?.status ?? ''}`);
  let body: AckBody;
  try {
    body = JSON.parse(decoder.decode(answer.data)) as AckBody;
  } catch {
    throw new Error(`JetStream's acknowledgement of ${subject} is not JSON`);
  }
  if (body.error !== undefined) throw new JetStreamApiError(body.error);
  if (typeof body.stream !== 'string' || body.stream === '' || typeof body.seq !== 'number')
    throw new Error(`JetStream's acknowledgement of ${subject} names no stream`);
  return { stream: body.stream, seq: body.seq, duplicate: body.duplicate === true };
}
