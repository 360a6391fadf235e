// Direct gets answered on the connection's inbox (inbox-requests.ts): one
// message, the last message of each of several subjects (batched,
// nats-server >= 2.11), or a page of one filter's messages in order.
// nats.js' own batched get subscribes a fresh inbox for every request: a SUB,
// the request, an UNSUB, and a subscription made and removed on nats-server
// each time; on the shared inbox a batched read is the request alone.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import { gathererOf, NoResponders, type AnswerGatherer } from './inbox-requests.js';

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
const NO_RESPONDERS = 503;

const encoder = new TextEncoder();

/**
 * The last message of each subject (or subject filter) in `filters` that
 * holds one, by subject. Never a partial answer, which would read as objects
 * that are not there: an error status, a batch cut short (IncompleteBatch)
 * or one that does not end within the JetStream API's timeout throws.
 */
export async function lastMessagesFor(
  nc: NatsConnection | AnswerGatherer,
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
  nc: NatsConnection | AnswerGatherer,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  stream: string,
  request: Readonly<Record<string, unknown>>,
  nothingFound: RegExp | undefined,
  maxWaitMs?: number,
): Promise<BatchAnswer> {
  const { apiPrefix, timeout: apiTimeout } = jsm.getOptions();
  const timeout = maxWaitMs ?? apiTimeout ?? 5_000;
  return gathererOf(nc).gather(
    `${apiPrefix ?? '$JS.API'}.DIRECT.GET.${stream}`,
    encoder.encode(JSON.stringify(request)),
    {
      timeoutMs: timeout,
      timedOut: () =>
        `direct get from ${stream}: the batch did not end within ${String(timeout)} ms`,
    },
    batchAnswers(stream, nothingFound),
  );
}

/**
 * Takes a batched direct get's answers one by one: undefined until the end
 * of batch, then the answer; throws on a status that ends it otherwise.
 */
export function batchAnswers(
  stream: string,
  nothingFound: RegExp | undefined,
): (message: Msg) => BatchAnswer | undefined {
  const messages: LastMessage[] = [];
  return (message) => {
    const headers = message.headers;
    const code = headers?.code ?? 0;
    if (code === 0 && headers !== undefined) {
      messages.push(storedOf(headers, message.data));
      return undefined;
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
    throw failureOf(stream, message);
  };
}

/**
 * One direct get (`last_by_subj`, or `seq` with `next_by_subj`): the message,
 * or undefined when there is none (404). Any other status throws; no stream
 * answering (503) is NATS being unavailable.
 */
export async function directGet(
  nc: NatsConnection | AnswerGatherer,
  jsm: Pick<JetStreamManager, 'getOptions'>,
  stream: string,
  query: Readonly<Record<string, unknown>>,
): Promise<LastMessage | undefined> {
  const { apiPrefix, timeout } = jsm.getOptions();
  const answer = await gathererOf(nc).gather(
    `${apiPrefix ?? '$JS.API'}.DIRECT.GET.${stream}`,
    encoder.encode(JSON.stringify(query)),
    {
      timeoutMs: timeout ?? 5_000,
      timedOut: () => `direct get from ${stream}: no answer in time`,
    },
    (first) => first,
  );
  const headers = answer.headers;
  const code = headers?.code ?? 0;
  if (code === 0 && headers !== undefined) return storedOf(headers, answer.data);
  if (code === NOT_FOUND) return undefined;
  throw failureOf(stream, answer);
}

/** A status that fails a direct get: no stream answering (503) is NATS being unavailable. */
function failureOf(stream: string, answer: Msg): Error {
  const code = answer.headers?.code ?? 0;
  if (code === NO_RESPONDERS)
    return new NoResponders(`direct get from ${stream}: no stream answered (503)`);
  return new Error(`direct get from ${stream}: ${String(code)} ${descriptionOf(answer)}`);
}

/** The server appends its own headers after the stored message's: the last of each name is its. */
function storedOf(headers: MsgHdrs, data: Uint8Array): LastMessage {
  return {
    subject: headers.last('Nats-Subject'),
    seq: Number(headers.last('Nats-Sequence')),
    data,
    header: headers,
  };
}

function descriptionOf(message: Msg): string {
  return message.headers?.description ?? 'answered without headers';
}
