// Fetches over HTTP(S) with an inactivity timeout, hashing the bytes as they
// are written, so a file is checked against its published digest before
// anything reads it (setup-envtest's readBody does the same).
import { createHash, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ArchiveError, reasonOf, redacted } from './archive-error.js';
import { safeUrl } from './archive-index.js';

/** A download that sends nothing for this long is given up. */
const IDLE_TIMEOUT_MS = 30_000;
/** No index, checksum list or archive of ours comes near this. */
const MAX_TEXT_BYTES = 8 * 1024 * 1024;
const MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024;
/** GitHub's release downloads take one redirect; a chain this long is a loop. */
const MAX_REDIRECTS = 5;

/** Same digest, compared in constant time (both are lower-case hex). */
export function sameDigest(expected: string, actual: string): boolean {
  const a = Buffer.from(expected.toLowerCase());
  const b = Buffer.from(actual.toLowerCase());
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A byte counter that aborts on inactivity and beyond `maxBytes`. */
function guarded(url: string, maxBytes: number, abort: AbortController): Transform {
  let seen = 0;
  let idle = setTimeout(() => abort.abort(), IDLE_TIMEOUT_MS);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      clearTimeout(idle);
      idle = setTimeout(() => abort.abort(), IDLE_TIMEOUT_MS);
      seen += chunk.length;
      if (seen > maxBytes) done(new Error(`${redacted(url)} sent more than ${maxBytes} bytes`));
      else done(null, chunk);
    },
    flush(done) {
      clearTimeout(idle);
      done();
    },
    destroy(error, done) {
      clearTimeout(idle);
      done(error);
    },
  });
}

/**
 * Where a redirect from `from` leads, if it is as safe as `from`: https, or
 * plain http on this machine reached from plain http on this machine (never
 * https downgraded to http). Anything else is refused, before it is asked.
 */
export function redirectTarget(from: URL, location: string | null): URL {
  const to = location === null ? undefined : safeUrl(location, from.href);
  if (to === undefined || (from.protocol === 'https:' && to.protocol !== 'https:'))
    throw new ArchiveError(
      'refused',
      `${from.href} redirects to ${location ?? 'nowhere'}, which is not https (plain http only on loopback): fix the mirror, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
  return to;
}

/**
 * `url` without its user and password, and those as an `Authorization: Basic`
 * header (fetch refuses a URL that carries them, as Go's proxy client does not).
 */
export function withoutCredentials(url: URL): { url: URL; authorization?: string } {
  if (url.username === '' && url.password === '') return { url };
  const bare = new URL(url.href);
  bare.username = '';
  bare.password = '';
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { url: bare, authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
}

/**
 * Fetches `url`, following at most MAX_REDIRECTS redirects, each one checked;
 * credentials in `url` go as a header, and only to its own origin.
 */
async function respond(url: string, signal: AbortSignal): Promise<Response> {
  const given = withoutCredentials(new URL(url));
  let at = given.url;
  for (let hops = 0; ; hops++) {
    const headers: Record<string, string> =
      given.authorization !== undefined && at.origin === given.url.origin
        ? { authorization: given.authorization }
        : {};
    const response = await fetch(at, { signal, redirect: 'manual', headers });
    if (![301, 302, 303, 307, 308].includes(response.status)) return response;
    await response.body?.cancel();
    if (hops === MAX_REDIRECTS)
      throw new ArchiveError(
        'refused',
        `${url} redirects more than ${MAX_REDIRECTS} times: fix the mirror, or set KUBEBUS_NO_DOWNLOAD=1`,
      );
    at = redirectTarget(at, response.headers.get('location'));
  }
}

async function open(url: string, abort: AbortController): Promise<Readable> {
  const idle = setTimeout(() => abort.abort(), IDLE_TIMEOUT_MS);
  try {
    const response = await respond(url, abort.signal);
    if (!response.ok || response.body === null)
      throw new ArchiveError('unavailable', `${url} answered ${response.status}`);
    return Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    const reason = abort.signal.aborted ? 'no answer in 30 s' : reasonOf(error);
    throw new ArchiveError('unavailable', `could not fetch ${url} (${reason})`, { cause: error });
  } finally {
    clearTimeout(idle);
  }
}

/** A small text file: an index or a checksum list. */
export async function fetchText(url: string): Promise<string> {
  const abort = new AbortController();
  const body = await open(url, abort);
  const chunks: Buffer[] = [];
  try {
    await pipeline(
      body,
      guarded(url, MAX_TEXT_BYTES, abort),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) chunks.push(chunk);
      },
    );
  } catch (error) {
    throw new ArchiveError('unavailable', `could not read ${url} (${reasonOf(error)})`, {
      cause: error,
    });
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Downloads `url` into `path`; returns the hex digest of what was written. */
export async function download(
  url: string,
  path: string,
  algorithm: 'sha256' | 'sha512',
): Promise<string> {
  const abort = new AbortController();
  const body = await open(url, abort);
  const hash = createHash(algorithm);
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(
      body,
      guarded(url, MAX_FILE_BYTES, abort),
      hashing,
      createWriteStream(path, { mode: 0o600 }),
    );
  } catch (error) {
    const reason = abort.signal.aborted ? 'it stalled for 30 s' : reasonOf(error);
    throw new ArchiveError('unavailable', `could not download ${url} (${reason})`, {
      cause: error,
    });
  }
  return hash.digest('hex');
}
