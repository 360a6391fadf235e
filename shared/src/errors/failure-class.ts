// Whose fault a failure is decides how it is retried (one place, used by the
// runtime): a dependency that is down is nobody's fault and is waited out for
// as long as it takes; so is a request the operator's own RBAC does not allow
// (an admin's to fix, said at error); a failure that follows the object gets a
// small budget and then one dead letter. The classes are read off the error
// and its causes by shape, so this module needs neither the Kubernetes nor the
// NATS client.
import { authorizationRefusal } from './authorization-refusal.js';
import { isOperatorError } from './error-origin.js';

export const FailureClasses = {
  /** the apiserver or NATS is unreachable, overloaded or timing out: wait it out */
  Transient: 'transient',
  /**
   * the operator's own RBAC refused the request (a 403 naming its user, or
   * RBAC's escalation check): waited out like a dependency until an admin
   * applies its RBAC, and said at error
   */
  Forbidden: 'forbidden',
  /** the apiserver refused this object's request (400, 403, 404, 422, …): retrying will not help */
  Object: 'object',
  /**
   * an outside system the operator's own code calls (its fetch in reconcile,
   * finalize or a ctx.once perform) refused the connection or timed out: not
   * the object's fault, so never dead-lettered — retried without limit at the
   * backoff, each try counted and said on the object (error-origin.ts)
   */
  External: 'external',
  /** anything else (a bug, an external system answering with an error): the usual retry budget */
  Unknown: 'unknown',
} as const;

export type FailureClass = (typeof FailureClasses)[keyof typeof FailureClasses];

/** Node's socket errors: the peer is not there (yet). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  // fetch's (undici's) own timeouts: the peer did not answer in time
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** nats.js errors meaning the server (or the connection to it) is not available now. */
const NATS_UNAVAILABLE = new Set([
  'TimeoutError',
  'ConnectionError',
  'ClosedConnectionError',
  'DrainingConnectionError',
  'NoResponders',
  'RequestError',
]);

/**
 * The 500s the apiserver answers for a body or a stored object that does not
 * fit the resource's schema — server-side apply's "failed to create typed
 * patch object" (a field the schema does not declare) and its live-object
 * twin, and a body its Go type cannot be decoded into ("unable to convert
 * unstructured object": a quantity `lots`, a string where an integer goes):
 * the same answer on every try, so the object's fault, not the server's. A
 * conversion webhook that does not answer is an outage, whatever wraps it.
 */
export function isSchemaMismatch(message: string): boolean {
  return (
    /failed to create typed (patch|live) object|unable to convert unstructured object/.test(
      message,
    ) && !/conversion webhook/i.test(message)
  );
}

interface ErrorShape {
  readonly message?: unknown;
  readonly name?: unknown;
  readonly code?: unknown;
  /** an HTTP status (KubeApiError); 0 means no answer */
  readonly status?: unknown;
  readonly cause?: unknown;
  /** a Kubernetes Status' details: which object was not found, the types of its causes */
  readonly details?: { readonly kind?: unknown; readonly causes?: unknown };
}

/** NamespaceLifecycle's refusal of new content in a namespace being deleted. */
function namespaceTerminating(shape: ErrorShape): boolean {
  const causes = shape.details?.causes;
  if (Array.isArray(causes) && causes.includes('NamespaceTerminating')) return true;
  return (
    typeof shape.message === 'string' &&
    /unable to create new content in namespace \S+ because it is being terminated/.test(
      shape.message,
    )
  );
}

/** nats.js' errors no other library names so: NATS not answering (setup's connection, host.nats). */
const NATS_OWN_NAMES = new Set([
  'ClosedConnectionError',
  'DrainingConnectionError',
  'NoResponders',
  'NoRespondersError',
]);

/**
 * An outside system's outage as the operator's own code meets it: a socket
 * error, fetch's timeout, NATS not answering. Only these shapes: a library's
 * `TimeoutError` or `HttpError` 503 of its own is the object's failure, as a
 * 503 answered by any outside system is (the usual budget).
 */
function ownOutage(shape: ErrorShape, e: object): boolean {
  if (typeof shape.code === 'string' && NETWORK_CODES.has(shape.code)) return true;
  if (e instanceof DOMException && shape.name === 'TimeoutError') return true;
  if (typeof shape.name !== 'string') return false;
  if (NATS_OWN_NAMES.has(shape.name)) return true;
  // nats-core's request timeout
  if (shape.name === 'TimeoutError' && shape.message === 'timeout') return true;
  return (
    /^JetStream(Api|Status)Error$/.test(shape.name) &&
    typeof shape.status === 'number' &&
    shape.status >= 500
  );
}

export function classifyFailure(error: unknown): FailureClass {
  // the operator's own call failing to connect is its outside system's outage, not the cluster's
  const own = isOperatorError(error);
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 8; depth++) {
    if (typeof e !== 'object' || e === null) break;
    const shape = e as ErrorShape;
    if (typeof shape.status === 'number' && shape.name === 'KubeApiError') {
      const status = shape.status;
      if (status >= 500 && typeof shape.message === 'string' && isSchemaMismatch(shape.message))
        return 'object';
      if (status === 0 || status === 408 || status === 429 || status >= 500) return 'transient';
      // the operator's own credentials (a rotated token, read again on the next try:
      // client.ts), never the object's fault
      if (status === 401) return 'transient';
      // the namespace it writes into is not there yet (applied after the object, as
      // GitOps tools may): waited out like a dependency, as controller-runtime requeues
      if (status === 404 && shape.details?.kind === 'namespaces') return 'transient';
      // the namespace is being deleted: once it is gone, the owner (a Tenant
      // making it) makes it again; else the write into it waits as above, and
      // `kubebus_reconcile_transient_retries_total` shows it
      if (status === 403 && namespaceTerminating(shape)) return 'transient';
      // RBAC, not the object's content (a webhook's or a policy's denial is that)
      if (
        status === 403 &&
        typeof shape.message === 'string' &&
        authorizationRefusal(shape.message) !== undefined
      )
        return 'forbidden';
      // 409: a write raced another writer; the next try reads again.
      if (status === 409) return 'unknown';
      if (status >= 400) return 'object';
    }
    if (own) {
      if (ownOutage(shape, e)) return 'external';
      e = shape.cause;
      continue;
    }
    if (typeof shape.code === 'string' && NETWORK_CODES.has(shape.code)) return 'transient';
    if (typeof shape.name === 'string' && NATS_UNAVAILABLE.has(shape.name)) return 'transient';
    // something under way elsewhere names its wait (another reconcile's external call,
    // ADR 0035): not the object's fault, waited out (outcome.ts waits the time it names)
    if (typeof (e as { waitMs?: unknown }).waitMs === 'number') return 'transient';
    // JetStream API errors from the server side (503 no leader, 500 "no suitable
    // peers for placement, peer offline"): the cluster is degraded, not the object.
    if (
      typeof shape.name === 'string' &&
      shape.name.endsWith('Error') &&
      typeof shape.status === 'number' &&
      shape.status >= 500 &&
      shape.name !== 'KubeApiError'
    )
      return 'transient';
    e = shape.cause;
  }
  return 'unknown';
}
