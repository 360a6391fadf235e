// A stand-in for the connection's inbox in unit tests: each request is
// answered with the messages given for it, then, unless they ended it,
// nothing more (the request's timeout).
import type { Msg } from '@nats-io/nats-core';
import { RequestTimedOut, type AnswerGatherer } from './inbox-requests.js';

/** Answers every request with the messages `answersTo` gives for its payload. */
export function answeringEach(answersTo: (payload: Uint8Array) => readonly Msg[]): AnswerGatherer {
  return {
    // async: what `take` throws rejects, as on the real inbox
    async gather(subject, payload, options, take) {
      for (const message of answersTo(payload)) {
        const value = take(message);
        if (value !== undefined) return Promise.resolve(value);
      }
      throw new RequestTimedOut(options.timedOut?.() ?? `no answer from ${subject} in time`);
    },
  };
}

/** Answers every request with `messages`. */
export function answeringWith(messages: readonly Msg[]): AnswerGatherer {
  return answeringEach(() => messages);
}
