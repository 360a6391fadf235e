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
 * Controls (C0, C1, DEL), the line and paragraph separators, and every
 * format character: the bidi controls (embeddings, overrides, isolates,
 * marks), the zero-width ones (space, joiners, word joiner, BOM), the soft
 * hyphen and the tag characters U+E0000–U+E007F, which print nothing and
 * carry hidden text to whoever (or whatever tool) reads it.
 */
export const UNSAFE_CHARACTERS = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
// the same, newlines left alone
export const UNSAFE_CHARACTERS_BUT_NEWLINE = /(?:(?!\n)[\p{Cc}\p{Cf}\u2028\u2029])/gu;

/** A character as `\u{…}`: what is seen is what was sent, and it no longer acts. */
export const escapeCharacter = (c: string) =>
  `\\u{${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}}`;

export const REDACTED = '[redacted]';

/** Text past this is cut before it is looked at (every place it goes keeps less). */
const MAX_SCANNED_CHARS = 64 * 1024;

// Each pattern may start only where a run of its characters starts (the
// lookbehinds): a start inside a run would scan the rest of it again, and a
// tenant's 1 MB of `a.a.a…` quoted by an error would block the process.
// scheme://[userinfo@]rest[?query][#fragment] — the userinfo (a password may hold '@'), query and fragment of any URL
const URL_PARTS =
  /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)([^\s/?#]*@)?([^\s?#]*)(\?[^\s#]*)?(#\S*)?/gi;
// `Bearer <token>`, `Basic <base64>` (an Authorization header quoted): a credential
// has a digit, a capital or a base64 sign, so "basic validation failed" is left alone
const AUTH_SCHEME =
  /(?<![\w-])([Bb]earer|[Bb]asic|BEARER|BASIC)\s+(?=[\w\-.~+/=]*[\dA-Z+/=])[\w\-.~+/=]{8,}/g;
// a JWT: three base64url parts, the first a JSON object's (`{"` is `eyJ`)
const JWT = /(?<![\w-])eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g;
// `password=…`, `api_key: …`, `"client_secret":"…"` (a connection string, a quoted config)
const KEYED_SECRET =
  /(?<![\w-])(password|passwd|pwd|secret|client[_-]?secret|token|access[_-]?token|api[_-]?key)(["']?\s*[=:]\s*["']?)[^\s"'&,;]+/gi;

/** At most `max` characters, never half of a surrogate pair (the apiserver would store U+FFFD). */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** The text with URL credentials, query strings and fragments, bearer and basic credentials, keyed secrets and JWTs replaced. */
export function redactCredentials(text: string): string {
  return cutChars(text, MAX_SCANNED_CHARS)
    .replace(
      URL_PARTS,
      (
        _url,
        scheme: string,
        userinfo: string | undefined,
        rest: string,
        query?: string,
        fragment?: string,
      ) =>
        `${scheme}${userinfo === undefined ? '' : `${REDACTED}@`}${rest}${redactedPart('?', query)}${redactedPart('#', fragment)}`,
    )
    .replace(AUTH_SCHEME, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(
      KEYED_SECRET,
      (_match, name: string, separator: string) => `${name}${separator}${REDACTED}`,
    );
}

/** A query or fragment with something in it, replaced; an empty one kept. */
function redactedPart(sign: '?' | '#', part: string | undefined): string {
  if (part === undefined) return '';
  return part === sign ? part : `${sign}${REDACTED}`;
}

/**
 * The text with every control character escaped (newlines too), then its
 * credentials replaced: given its own output, it gives it again.
 */
export function publicText(text: string): string {
  return redactCredentials(
    cutChars(text, MAX_SCANNED_CHARS).replace(UNSAFE_CHARACTERS, escapeCharacter),
  );
}

/** An error's message (or the thrown value) as `publicText`. */
export function publicErrorText(error: unknown): string {
  return publicText(error instanceof Error ? error.message : String(error));
}
