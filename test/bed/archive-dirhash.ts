// The `h1:` hash go.sum and the checksum database record for a module zip
// (golang.org/x/mod/sumdb/dirhash Hash1): the sha256 of one
// `<sha256 hex>  <name>\n` line per file, sorted by name, base64. It covers
// the names and contents of the files, not the zip's bytes, so every module
// proxy (or mirror) that re-packs the same module gives the same hash.
import { createHash } from 'node:crypto';
import type { Zip } from './archive-zip.js';

export function hash1(zip: Zip): string {
  const names = [...zip.names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const summary = createHash('sha256');
  for (const name of names) {
    if (name.includes('\n'))
      throw new Error(`a file name holds a newline: ${JSON.stringify(name)}`);
    const file = createHash('sha256').update(zip.read(name)).digest('hex');
    summary.update(`${file}  ${name}\n`);
  }
  return `h1:${summary.digest('base64')}`;
}
