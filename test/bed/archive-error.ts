// Why a prebuilt download did not give a server. `unavailable` (no network, not
// published, refused by the host) lets resolution go on to the Go build;
// `refused` (checksum mismatch, damaged archive, unsafe URL) stops it, because
// a mirror serving bad bytes is something a person must look at.
export const ARCHIVE_ERROR_CODES = ['unavailable', 'refused'] as const;
export type ArchiveErrorCode = (typeof ARCHIVE_ERROR_CODES)[number];

export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';

  constructor(
    readonly code: ArchiveErrorCode,
    /** one line: what went wrong and the next step */
    message: string,
    options?: ErrorOptions,
  ) {
    super(redacted(message), options);
  }
}

/**
 * `text` with the user and password taken out of every URL in it
 * (`https://user:token@host/` → `https://host/`): a GOPROXY or mirror URL that
 * carries credentials is printed through this, never as given.
 */
export const redacted = (text: string) =>
  text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, '$1');

export const isArchiveError = (error: unknown): error is ArchiveError =>
  error instanceof ArchiveError;

/** The one-line reason a fetch failed: node's `fetch failed` hides it in the cause. */
export function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const text =
    typeof cause?.message === 'string' && cause.message !== ''
      ? cause.message
      : error instanceof Error
        ? error.message
        : String(error);
  return text.split('\n')[0] ?? text;
}
