// The last message of each of several subjects in one batched direct get
// (nats-server >= 2.11), answered on the connection's shared request inbox.
// nats.js' own batched get subscribes a fresh inbox for every request: a SUB,
// the request, an UNSUB, and a subscription made and removed on nats-server
// each time; on the shared inbox a batched read is the request alone.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';

export interface LastMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly header: MsgHdrs | undefined;
}

/** nats-server's answer that the batch is complete, and that none of its subjects holds a message. */
const END_OF_BATCH = 204;
const NO_RESULTS = 404;

/**
 * The last message of each subject (or subject filter) in `filters` that
 * holds one, by subject. Throws on an error status (413: more messages than
 * the server answers at once) and when the batch does not end within the
 * JetStream API's timeout: a partial answer would read as objects that are
 * not there.
 */
export async function lastMessagesFor(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  filters: readonly string[],
): Promise<Map<string, LastMessage>> {
  const { apiPrefix, timeout } = jsm.getOptions();
  const found = new Map<string, LastMessage>();
  const answers = await nc.requestMany(
    `${apiPrefix ?? '$JS.API'}.DIRECT.GET.${stream}`,
    JSON.stringify({ multi_last: filters }),
    { strategy: 'timer', maxWait: timeout ?? 5_000 },
  );
  for await (const message of answers) {
    const headers = message.headers;
    const code = headers?.code ?? 0;
    if (code === END_OF_BATCH || code === NO_RESULTS) return found;
    if (code !== 0 || headers === undefined)
      throw new Error(
        `direct get from ${stream}: ${String(code)} ${headers?.description ?? 'answered without headers'}`,
      );
    const subject = headers.get('Nats-Subject');
    found.set(subject, {
      subject,
      seq: Number(headers.get('Nats-Sequence')),
      data: message.data,
      header: headers,
    });
  }
  throw new Error(`direct get from ${stream}: the batch did not end within ${String(timeout)} ms`);
}
