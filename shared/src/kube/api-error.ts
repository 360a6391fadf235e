// An error status from the apiserver, with what a caller decides on: the HTTP
// code, the Status reason, and Retry-After.
import { ErrorCodes, KubebusError, isSchemaMismatch } from '../errors/mod.js';

export class KubeApiError extends KubebusError {
  override readonly name = 'KubeApiError';

  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterMs?: number,
    /**
     * a 410 Expired list's Status metadata.continue: where an inconsistent
     * list goes on (objects at a newer resourceVersion), when the apiserver gave one
     */
    readonly continueToken?: string,
    /**
     * the Status' details: which object the apiserver did not find (a 404's
     * `kind` and `name`), and the types of its causes (NamespaceTerminating)
     */
    readonly details?: {
      readonly kind?: string;
      readonly name?: string;
      readonly causes?: readonly string[];
    },
  ) {
    super(status === 410 ? ErrorCodes.WatchExpired : ErrorCodes.KubeApi, message);
  }

  /** Worth retrying: throttled, server-side trouble, or no answer at all (status 0); not a body the schema refuses. */
  get retryable(): boolean {
    if (this.status >= 500 && isSchemaMismatch(this.message)) return false;
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

export function isKubeApiError(error: unknown, status?: number): error is KubeApiError {
  return error instanceof KubeApiError && (status === undefined || error.status === status);
}

export function isGone(error: unknown): boolean {
  return isKubeApiError(error, 410);
}

export function isNotFound(error: unknown): boolean {
  return isKubeApiError(error, 404);
}

export function isConflict(error: unknown): boolean {
  return isKubeApiError(error, 409);
}

/**
 * No answer at all (status 0): a refused or reset connection, a timeout. The
 * text names why — Node gives an AggregateError of one ECONNREFUSED per
 * address an empty message, so its errors' messages, or else its code.
 */
export function noAnswer(error: unknown): KubeApiError {
  return new KubeApiError(0, 'NoResponse', `no answer from the apiserver: ${whyNot(error)}`);
}

function whyNot(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  const { errors, code } = error as { errors?: unknown; code?: unknown };
  const inner = Array.isArray(errors) ? [...new Set(errors.map(whyNot))].filter(Boolean) : [];
  if (inner.length > 0) return inner.join('; ');
  return typeof code === 'string' ? code : error.name;
}

/** Builds the error from a response body (a metav1.Status when the apiserver sent one). */
export function apiErrorFrom(
  status: number,
  body: string,
  headers: Record<string, string | string[] | undefined>,
): KubeApiError {
  let reason = '';
  let message = body.slice(0, 500);
  let continueToken: string | undefined;
  let details: { kind?: string; name?: string; causes?: string[] } | undefined;
  try {
    const parsed = JSON.parse(body) as {
      reason?: unknown;
      message?: unknown;
      metadata?: { continue?: unknown };
      details?: { kind?: unknown; name?: unknown; causes?: unknown };
    };
    if (typeof parsed.reason === 'string') reason = parsed.reason;
    if (typeof parsed.message === 'string') message = parsed.message;
    const token = parsed.metadata?.continue;
    if (typeof token === 'string' && token !== '') continueToken = token;
    const { kind, name, causes } = parsed.details ?? {};
    // a StatusCause's type is written `reason` in JSON (metav1.StatusCause)
    const causeTypes = Array.isArray(causes)
      ? causes
          .map((cause) => (cause as { reason?: unknown } | null)?.reason)
          .filter((type): type is string => typeof type === 'string')
      : [];
    if (typeof kind === 'string' || typeof name === 'string' || causeTypes.length > 0)
      details = {
        ...(typeof kind === 'string' ? { kind } : {}),
        ...(typeof name === 'string' ? { name } : {}),
        ...(causeTypes.length > 0 ? { causes: causeTypes } : {}),
      };
  } catch {
    // not a Status
  }
  const retryAfter = Number(headers['retry-after']);
  return new KubeApiError(
    status,
    reason,
    `apiserver answered ${status}${reason ? ` ${reason}` : ''}: ${message}`,
    Number.isFinite(retryAfter) ? retryAfter * 1_000 : undefined,
    continueToken,
    details,
  );
}
