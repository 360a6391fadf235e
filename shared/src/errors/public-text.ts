// Text written where more people read than wrote it: a condition's message
// and an Event's note (anyone with the built-in `view` role reads them, not
// Secrets), a dead letter's reason, a log line. Much of it is an error's
// message, and errors quote what they failed on: fetch and node-fetch put the
// whole URL in theirs (`request to https://user:token@host/?api_key=… failed`),
// a zod issue quotes the key a tenant wrote. So URL credentials and query
// strings, bearer and basic credentials and JWTs are replaced, and control
// and bidi characters escaped (a terminal or dashboard obeys them). The same
// text given twice comes out the same: a status compared with itself stays
// unchanged.

/**
 * C0 and C1 controls (with DEL), the line and paragraph separators, and the
 * bidi controls: embeddings and overrides U+202A–U+202E, isolates
 * U+2066–U+2069, and the marks U+200E, U+200F and U+061C.
 */
/* eslint-disable no-control-regex -- control characters are what is being escaped */
export const UNSAFE_CHARACTERS =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
// the same, newlines left alone
export const UNSAFE_CHARACTERS_BUT_NEWLINE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
/* eslint-enable no-control-regex */

/** A character as `\u{…}`: what is seen is what was sent, and it no longer acts. */
export const escapeCharacter = (c: string) =>
  `\\u{${c.charCodeAt(0).toString(16).padStart(4, '0')}}`;

export const REDACTED = '[redacted]';

// scheme://[userinfo@]rest[?query] — the userinfo and query of any URL
const URL_PARTS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@]*@)?([^\s?#]*)(\?[^\s#]*)?/gi;
// `Bearer <token>`, `Basic <base64>` (an Authorization header quoted)
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[\w\-.~+/=]{8,}/gi;
// a JWT: three base64url parts, the first a JSON object's (`{"` is `eyJ`)
const JWT = /\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g;

/** The text with URL credentials and query strings, bearer and basic credentials and JWTs replaced. */
export function redactCredentials(text: string): string {
  return text
    .replace(
      URL_PARTS,
      (_url, scheme: string, userinfo: string | undefined, rest: string, query?: string) =>
        `${scheme}${userinfo === undefined ? '' : `${REDACTED}@`}${rest}${
          query === undefined || query === '?' ? (query ?? '') : `?${REDACTED}`
        }`,
    )
    .replace(AUTH_SCHEME, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED);
}

/** The text with credentials replaced and every control character escaped (newlines too). */
export function publicText(text: string): string {
  return redactCredentials(text).replace(UNSAFE_CHARACTERS, escapeCharacter);
}

/** An error's message (or the thrown value) as `publicText`. */
export function publicErrorText(error: unknown): string {
  return publicText(error instanceof Error ? error.message : String(error));
}
