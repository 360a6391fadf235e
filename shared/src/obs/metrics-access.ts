// Who may read /metrics: controller-runtime's
// filters.WithAuthenticationAndAuthorization (pkg/metrics/filters, v0.16+).
// The bearer token is authenticated by the apiserver (a TokenReview), then the
// user it names is authorized by a SubjectAccessReview for the non-resource
// URL of the request and its verb (`get /metrics`) — what the
// `metrics-reader` ClusterRole grants. No or a bad token → 401; a user RBAC
// does not allow → 403; the apiserver unreachable → 503. Decisions are kept a
// short while by a digest of the token, as controller-runtime's delegating
// authenticator (1 min) and authorizer (5 min allowed, 30 s denied) do.
import { createHash } from 'node:crypto';
import type { Logger } from './logger.js';

export type AccessDecision =
  | { readonly ok: true; readonly user: string }
  | { readonly ok: false; readonly status: 401 | 403 | 503; readonly reason: string };

/** Decides on a request from its Authorization header, path and method. */
export interface MetricsAccess {
  check(authorization: string | undefined, path: string, method: string): Promise<AccessDecision>;
}

/** A function as a MetricsAccess. */
export function accessFunc(check: MetricsAccess['check']): MetricsAccess {
  return { check };
}

/** A POST of a review object to the apiserver, answered with the review (its status filled). */
export type ReviewPost = (path: string, body: object) => Promise<unknown>;

interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

const AUTHN_TTL_MS = 60_000;
const ALLOW_TTL_MS = 5 * 60_000;
const DENY_TTL_MS = 30_000;
const MAX_ENTRIES = 1_024;
/** Service-account tokens are ~1 KB; longer headers are not sent to the apiserver. */
const MAX_TOKEN_CHARS = 16 * 1024;

/** Reviews waiting on the apiserver at once; above it a request is answered 503. */
const MAX_REVIEWS_IN_FLIGHT = 16;
const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** A bounded map whose entries expire. */
class Expiring<V> {
  readonly #entries = new Map<string, { until: number; value: V }>();
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.until <= now) return undefined;
    return entry.value;
  }
  set(key: string, value: V, until: number): void {
    if (this.#entries.size >= MAX_ENTRIES) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { until, value });
  }
}

/** TokenReview, then SubjectAccessReview, through the apiserver. */
export function kubernetesMetricsAccess(
  post: ReviewPost,
  log: Logger,
  clock: () => number = Date.now,
): MetricsAccess {
  const users = new Expiring<ReviewedUser | undefined>();
  const decisions = new Expiring<boolean>();

  async function authenticate(token: string): Promise<ReviewedUser | undefined> {
    const key = digest(token);
    const known = users.get(key, clock());
    if (known !== undefined) return known;
    const review = (await post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    })) as { status?: { authenticated?: boolean; user?: ReviewedUser } };
    const user =
      review.status?.authenticated === true && review.status.user?.username !== undefined
        ? review.status.user
        : undefined;
    // only a success is kept: a token that fails now may be one not yet known
    if (user !== undefined) users.set(key, user, clock() + AUTHN_TTL_MS);
    return user;
  }

  async function authorize(user: ReviewedUser, path: string, verb: string): Promise<boolean> {
    const key = digest(
      JSON.stringify([user.username, user.uid, user.groups, user.extra, path, verb]),
    );
    const known = decisions.get(key, clock());
    if (known !== undefined) return known;
    const review = (await post('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        ...(user.uid === undefined ? {} : { uid: user.uid }),
        groups: user.groups ?? [],
        ...(user.extra === undefined ? {} : { extra: user.extra }),
        nonResourceAttributes: { path, verb },
      },
    })) as { status?: { allowed?: boolean } };
    const allowed = review.status?.allowed === true;
    decisions.set(key, allowed, clock() + (allowed ? ALLOW_TTL_MS : DENY_TTL_MS));
    return allowed;
  }

  // uncached tokens cost the apiserver two reviews each: a flood of made-up ones waits for none
  let reviewing = 0;
  return {
    async check(authorization, path, method) {
      const token = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1];
      if (token === undefined || token.length > MAX_TOKEN_CHARS)
        return { ok: false, status: 401, reason: 'a bearer token is required' };
      if (reviewing >= MAX_REVIEWS_IN_FLIGHT)
        return { ok: false, status: 503, reason: 'too many requests are being verified: retry' };
      reviewing++;
      try {
        return await reviewed(token, path, method);
      } finally {
        reviewing--;
      }
    },
  };

  async function reviewed(token: string, path: string, method: string): Promise<AccessDecision> {
    // the verb of a non-resource request is the method, lower-cased (as the apiserver's)
    const verb = method.toLowerCase();
    try {
      const user = await authenticate(token);
      if (user === undefined)
        return { ok: false, status: 401, reason: 'the bearer token is not valid' };
      if (!(await authorize(user, path, verb)))
        return {
          ok: false,
          status: 403,
          reason: `${user.username} may not ${verb} ${path}`,
        };
      return { ok: true, user: user.username };
    } catch (error) {
      log.warn(
        { err: error },
        'cannot review a /metrics request: the service account needs create on tokenreviews and subjectaccessreviews',
      );
      return { ok: false, status: 503, reason: 'the request cannot be verified now' };
    }
  }
}
