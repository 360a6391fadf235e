// Batched direct gets (nats-server >= 2.11) answered on the connection's
// shared request inbox: the last message of each of several subjects, or a
// page of one filter's messages in order.
// nats.js' own batched get subscribes a fresh inbox for every request: a SUB,
// the request, an UNSUB, and a subscription made and removed on nats-server
// each time; on the shared inbox a batched read is the request alone.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/nats-core';

export interface LastMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly header: MsgHdrs | undefined;
}

/** More than one batch answers (413, or an end of batch with messages still pending): ask otherwise. */
export class IncompleteBatch extends Error {}

/** nats-server's statuses that end a batch. */
const END_OF_BATCH = 204;
const NOT_FOUND = 404;
const TOO_MANY = 413;

/**
 * The last message of each subject (or subject filter) in `filters` that
 * holds one, by subject. Never a partial answer, which would read as objects
 * that are not there: an error status, a batch cut short (IncompleteBatch)
 * or one that does not end within the JetStream API's timeout throws.
 */
export async function lastMessagesFor(
  nc: Pick<NatsConnection, 'requestMany'>,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  stream: string,
  filters: readonly string[],
): Promise<Map<string, LastMessage>> {
  const answer = await directBatch(nc, jsm, stream, { multi_last: filters }, /no results/i);
  if (answer.pending > 0)
    throw new IncompleteBatch(`direct get from ${stream}: too many results for one batch`);
  return new Map(answer.messages.map((message) => [message.subject, message]));
}

export interface BatchAnswer {
  /** in the stream's order */
  readonly messages: readonly LastMessage[];
  /** the messages the request matches past the last one answered, as the end of batch counts them */
  readonly pending: number;
}

/**
 * One batched direct get (`request` names `batch` or `multi_last`): the
 * messages answered up to the end of batch. A 404 alone whose description
 * matches `nothingFound` answers nothing; any other status, a 413 included
 * (IncompleteBatch), or no end within `maxWaitMs` (by default the JetStream
 * API's timeout) throws.
 */
export async function directBatch(
  nc: Pick<NatsConnection, 'requestMany'>,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  stream: string,
  request: Readonly<Record<string, unknown>>,
  nothingFound: RegExp | undefined,
  maxWaitMs?: number,
): Promise<BatchAnswer> {
  const { apiPrefix, timeout: apiTimeout } = jsm.getOptions();
  const timeout = maxWaitMs ?? apiTimeout ?? 5_000;
  const messages: LastMessage[] = [];
  const answers = await nc.requestMany(
    `${apiPrefix ?? '$JS.API'}.DIRECT.GET.${stream}`,
    JSON.stringify(request),
    { strategy: 'timer', maxWait: timeout },
  );
  for await (const message of answers) {
    const headers = message.headers;
    const code = headers?.code ?? 0;
    if (code === 0 && headers !== undefined) {
      // the server appends its own headers after the stored message's
      messages.push({
        subject: headers.last('Nats-Subject'),
        seq: Number(headers.last('Nats-Sequence')),
        data: message.data,
        header: headers,
      });
      continue;
    }
    if (code === END_OF_BATCH)
      return { messages, pending: Number(headers?.last('Nats-Num-Pending') || 0) };
    // "nothing" comes alone; a 404 after messages is one that failed to load
    if (
      code === NOT_FOUND &&
      messages.length === 0 &&
      nothingFound?.test(descriptionOf(message)) === true
    )
      return { messages, pending: 0 };
    if (code === TOO_MANY)
      throw new IncompleteBatch(`direct get from ${stream}: 413 ${descriptionOf(message)}`);
    throw new Error(`direct get from ${stream}: ${String(code)} ${descriptionOf(message)}`);
  }
  throw new Error(`direct get from ${stream}: the batch did not end within ${String(timeout)} ms`);
}

function descriptionOf(message: Msg): string {
  return message.headers?.description ?? 'answered without headers';
}
