// KUBEBUS_SERVER_SUMS: the digests a site vetted itself, one
// `<sha256-or-sha512> <archive file name>` line each (sha256sum's output).
// When it is set it is the only source of digests: the checksum lists on the
// host (or mirror) that serves the archives are not read, so a host that
// swaps both an archive and its listed digest is still caught.
import { readFileSync } from 'node:fs';
import { ArchiveError, reasonOf } from './archive-error.js';
import { parseChecksums } from './archive-index.js';

export interface VettedSums {
  readonly file: string;
  /** archive file name → lower-case hex */
  readonly sums: ReadonlyMap<string, string>;
}

export function readVettedSums(file: string): VettedSums {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ArchiveError(
      'refused',
      `KUBEBUS_SERVER_SUMS=${file} cannot be read (${reasonOf(error)}): fix the path, or unset it`,
      { cause: error },
    );
  }
  return { file, sums: parseChecksums(text) };
}

/** The vetted digest of the first of `names` the file lists (a path, then the bare name). */
export function vettedDigest(
  vetted: VettedSums,
  names: readonly string[],
): { algorithm: 'sha256' | 'sha512'; digest: string } {
  for (const name of names) {
    const digest = vetted.sums.get(name);
    if (digest !== undefined)
      return { algorithm: digest.length === 128 ? 'sha512' : 'sha256', digest };
  }
  throw new ArchiveError(
    'refused',
    `KUBEBUS_SERVER_SUMS=${vetted.file} lists no digest for ${names.at(-1) ?? ''}: add its vetted sha256 or sha512, or unset KUBEBUS_SERVER_SUMS`,
  );
}
