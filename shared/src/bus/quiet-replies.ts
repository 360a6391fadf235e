// nats-core ends every answered request by cancelling it, and its cancel
// rejects the request's promise — already settled by the answer — with a new
// RequestError: an Error, its stack captured, built and dropped on every
// reply (0.8 s of kubebus-one's ~20 CPU s at N=1000, `npm run bench --
// --profile`: JetStream publishes, direct gets, API calls). On a connection
// given here, an answered request ends without one; a request that fails,
// times out or is cancelled unanswered keeps nats-core's own error.
import type { NatsConnection } from '@nats-io/nats-core';

/** The parts of nats-core's single-answer request this relies on (not in its typed API). */
interface AnswerableRequest {
  resolver(error: Error | null, message: unknown): void;
  cancel(error?: Error): void;
  readonly deferred: unknown;
  readonly timer?: { cancel(): void };
  readonly mux: { cancel(request: unknown): void };
}

interface ProtocolInternals {
  request(request: unknown): unknown;
}

/** Marks a protocol handler already patched. */
const QUIET = Symbol('kubebus.quietReplies');

function isProtocol(value: unknown): value is ProtocolInternals {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<ProtocolInternals>).request === 'function'
  );
}

/** nats-core's RequestOne; its RequestMany (no `deferred`) ends without an error already. */
function isAnswerable(value: unknown): value is AnswerableRequest {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof AnswerableRequest, unknown>>;
  return (
    typeof candidate.resolver === 'function' &&
    typeof candidate.cancel === 'function' &&
    'deferred' in candidate &&
    typeof (candidate.mux as { cancel?: unknown } | undefined)?.cancel === 'function'
  );
}

function quiet(request: AnswerableRequest): void {
  const resolver = request.resolver.bind(request);
  const cancel = request.cancel.bind(request);
  let answered = false;
  request.resolver = (error, message) => {
    answered = true; // the answer (or the error it carries) settles the promise
    resolver(error, message);
  };
  request.cancel = (error) => {
    if (!answered || error !== undefined) {
      cancel(error);
      return;
    }
    // what nats-core's cancel does, without rejecting a settled promise
    request.timer?.cancel();
    request.mux.cancel(request);
  };
}

/**
 * Makes the connection's answered requests end without building an error.
 * Returns whether it does: a nats-core whose internals differ keeps its own.
 */
export function quietReplies(nc: NatsConnection): boolean {
  const protocol = (nc as unknown as { protocol?: unknown }).protocol;
  if (!isProtocol(protocol)) return false;
  if (QUIET in protocol) return true;
  const request = protocol.request.bind(protocol);
  protocol.request = (r: unknown) => {
    if (isAnswerable(r)) quiet(r);
    return request(r);
  };
  Object.defineProperty(protocol, QUIET, { value: true });
  return true;
}
