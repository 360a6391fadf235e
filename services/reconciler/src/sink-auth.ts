// Who may POST to the CloudEvents sink. Three modes (config.ts):
//
// - oidc: Knative's sender identity (the `authentication-oidc` feature). A
//   source or Broker sends `Authorization: Bearer <token>`, a service-account
//   token it requested for the sink's audience. Knative's own receivers
//   (knative.dev/eventing pkg/auth/verifier.go) answer 401 to a request with
//   no token or one whose signature, issuer, expiry or audience does not
//   verify, and 403 to a verified sender no policy allows. The check here is
//   the apiserver's TokenReview with the audience: it verifies the same
//   (signature, issuer, expiry, audience) and also that the token's pod and
//   service account still exist. The optional subject list is the
//   counterpart of Knative's EventPolicy `from`.
// - token: a shared token read from a file (a mounted Secret), compared in
//   constant time.
// - none: anyone; config.ts allows it only on a loopback address.
import type { KubeClient } from '@kubebus/shared/kube';
import { isKubeApiError } from '@kubebus/shared/kube';
import { ErrorCodes, KubebusError } from '@kubebus/shared/errors';
import type { Logger } from '@kubebus/shared/obs';
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { SinkAuthConfig } from './config.js';

export type AuthDecision =
  | {
      readonly ok: true;
      /** the verified sender, when the mode names one */ readonly subject?: string;
    }
  | {
      readonly ok: false;
      /** 401: no or bad credentials; 403: a sender not allowed; 503: cannot tell now */
      readonly status: 401 | 403 | 503;
      readonly reason: string;
    };

/** Decides on a request from its Authorization header. */
export interface SinkAuthenticator {
  authenticate(authorization: string | undefined): Promise<AuthDecision>;
}

/** A function as a SinkAuthenticator. */
export function authenticatorFunc(
  authenticate: (authorization: string | undefined) => Promise<AuthDecision>,
): SinkAuthenticator {
  return { authenticate };
}

/** Longest bearer token looked at: service-account tokens are ~1 KB. */
const MAX_TOKEN_CHARS = 16 * 1024;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function bearerOf(authorization: string | undefined): string | undefined {
  const matched = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return matched?.[1];
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The authenticator for a configuration; reads what it needs first (the token file). */
export async function sinkAuthenticator(
  config: SinkAuthConfig,
  client: KubeClient,
  log: Logger,
): Promise<SinkAuthenticator> {
  switch (config.mode) {
    case 'none':
      return authenticatorFunc(() => Promise.resolve({ ok: true }));
    case 'token':
      return new SharedTokenAuthenticator(config.tokenFile, await readToken(config.tokenFile), log);
    case 'oidc':
      return new TokenReviewAuthenticator(client, config.audience, config.subjects, log);
  }
}

async function readToken(file: string): Promise<string> {
  let token: string;
  try {
    token = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      `KUBEBUS_HTTP_TOKEN_FILE: cannot read ${file} (${(error as Error).message})`,
    );
  }
  if (token.length < 16)
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      `KUBEBUS_HTTP_TOKEN_FILE: ${file} holds ${token.length === 0 ? 'no token' : 'a token shorter than 16 characters'}`,
    );
  return token;
}

/** A shared secret; the file is read again at most every 10 s (a rotated Secret). */
class SharedTokenAuthenticator implements SinkAuthenticator {
  #expected: Buffer;
  #readAt = Date.now();

  constructor(
    private readonly file: string,
    token: string,
    private readonly log: Logger,
  ) {
    this.#expected = digest(token);
  }

  async authenticate(authorization: string | undefined): Promise<AuthDecision> {
    const presented = bearerOf(authorization);
    if (presented === undefined || presented.length > MAX_TOKEN_CHARS)
      return { ok: false, status: 401, reason: 'a bearer token is required' };
    await this.#refresh();
    // equal-length digests: the comparison takes the same time whatever is sent
    return timingSafeEqual(digest(presented), this.#expected)
      ? { ok: true }
      : { ok: false, status: 401, reason: 'the bearer token is not the sink token' };
  }

  async #refresh(): Promise<void> {
    if (Date.now() - this.#readAt < 10_000) return;
    this.#readAt = Date.now();
    try {
      this.#expected = digest(await readToken(this.file));
    } catch (error) {
      this.log.warn({ err: error }, 'cannot read the sink token again; keeping the last one');
    }
  }
}

interface TokenReviewStatus {
  readonly authenticated?: boolean;
  readonly audiences?: readonly string[];
  readonly user?: { readonly username?: string };
  readonly error?: string;
}

/** Successful reviews are kept this long (or until the token expires), at most this many. */
const REVIEW_CACHE_MS = 30_000;
const REVIEW_CACHE_ENTRIES = 1_024;

/** Knative's sender identity, verified by the apiserver (TokenReview with the audience). */
class TokenReviewAuthenticator implements SinkAuthenticator {
  readonly #reviewed = new Map<string, { until: number; subject: string }>();

  constructor(
    private readonly client: KubeClient,
    private readonly audience: string,
    private readonly subjects: readonly string[],
    private readonly log: Logger,
  ) {}

  async authenticate(authorization: string | undefined): Promise<AuthDecision> {
    const token = bearerOf(authorization);
    if (token === undefined)
      return { ok: false, status: 401, reason: 'an OIDC bearer token is required' };
    if (token.length > MAX_TOKEN_CHARS || !JWT_SHAPE.test(token))
      return { ok: false, status: 401, reason: 'the bearer token is not a JWT' };
    const key = digest(token).toString('hex');
    const now = Date.now();
    const cached = this.#reviewed.get(key);
    const subject =
      cached !== undefined && cached.until > now ? cached.subject : await this.#review(token, key);
    if (typeof subject !== 'string') return subject;
    if (this.subjects.length > 0 && !this.subjects.includes(subject))
      return { ok: false, status: 403, reason: `${subject} may not send events to this sink` };
    return { ok: true, subject };
  }

  async #review(token: string, key: string): Promise<string | AuthDecision> {
    let status: TokenReviewStatus;
    try {
      const review = await this.client.request<{ status?: TokenReviewStatus }>(
        '/apis/authentication.k8s.io/v1/tokenreviews',
        {
          method: 'POST',
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token, audiences: [this.audience] },
          },
        },
      );
      status = review.status ?? {};
    } catch (error) {
      if (isKubeApiError(error, 403))
        this.log.error(
          { err: error },
          'the apiserver refuses this reconciler TokenReviews: grant it create on tokenreviews.authentication.k8s.io',
        );
      else this.log.warn({ err: error }, 'TokenReview failed');
      return { ok: false, status: 503, reason: 'the sender cannot be verified now' };
    }
    // an audience-unaware authenticator may say yes without the audience: not enough
    if (status.authenticated !== true || !(status.audiences ?? []).includes(this.audience))
      return {
        ok: false,
        status: 401,
        reason: `the token is not valid for audience ${this.audience}${status.error === undefined ? '' : `: ${status.error.slice(0, 200)}`}`,
      };
    const subject = status.user?.username ?? '';
    this.#remember(key, subject, token);
    return subject;
  }

  #remember(key: string, subject: string, token: string): void {
    const expiresAt = expiryOf(token) ?? Number.POSITIVE_INFINITY;
    const until = Math.min(Date.now() + REVIEW_CACHE_MS, expiresAt);
    if (this.#reviewed.size >= REVIEW_CACHE_ENTRIES) {
      const oldest = this.#reviewed.keys().next();
      if (oldest.done !== true) this.#reviewed.delete(oldest.value);
    }
    this.#reviewed.set(key, { until, subject });
  }
}

/** The `exp` of a JWT the apiserver has just verified, in ms (it bounds the cache only). */
function expiryOf(token: string): number | undefined {
  try {
    const payload = JSON.parse(
      Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'),
    ) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1_000 : undefined;
  } catch {
    return undefined;
  }
}
