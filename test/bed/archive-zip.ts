// Reads a .zip (a Go module zip from a module proxy) through its central
// directory: the names of its files and, asked for one, its bytes. Only what
// module zips use is understood (stored or deflated, no zip64, no
// encryption); anything else, or a damaged archive, throws a ZipError. Names
// stay names: the caller decides where, if anywhere, a file is written.
import { readFile } from 'node:fs/promises';
import { crc32, inflateRawSync } from 'node:zlib';

export class ZipError extends Error {
  override readonly name = 'ZipError';
}

interface Entry {
  readonly method: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localHeader: number;
}

export interface Zip {
  /** every file's name, as the archive spells it (directories left out) */
  readonly names: readonly string[];
  /** a file's bytes, checked against its size and CRC-32 */
  read(name: string): Buffer;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_HEADER = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** Module zips are at most 500 MB (Go's limit); a comment at most 64 KiB. */
const MAX_TAIL = 22 + 0xffff;

function endOfDirectory(zip: Buffer): number {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - MAX_TAIL); at--)
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  throw new ZipError('no end of central directory: not a zip, or cut short');
}

function within(zip: Buffer, at: number, length: number, what: string): void {
  if (at < 0 || at + length > zip.length) throw new ZipError(`${what} lies outside the archive`);
}

export async function readZip(path: string): Promise<Zip> {
  const zip = await readFile(path);
  const end = endOfDirectory(zip);
  const count = zip.readUInt16LE(end + 10);
  const directorySize = zip.readUInt32LE(end + 12);
  const directory = zip.readUInt32LE(end + 16);
  if (count === 0xffff || directory === 0xffffffff)
    throw new ZipError('a zip64 archive (no module zip is one)');
  within(zip, directory, directorySize, 'the central directory');
  const entries = new Map<string, Entry>();
  let at = directory;
  for (let i = 0; i < count; i++) {
    within(zip, at, 46, 'a central directory entry');
    if (zip.readUInt32LE(at) !== CENTRAL_HEADER)
      throw new ZipError('a central directory entry has a bad signature');
    const flags = zip.readUInt16LE(at + 8);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    within(zip, at + 46, nameLength, 'a file name');
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if ((flags & 0x1) !== 0) throw new ZipError(`${name} is encrypted`);
    if (entries.has(name)) throw new ZipError(`the archive holds ${name} twice`);
    if (!name.endsWith('/'))
      entries.set(name, {
        method: zip.readUInt16LE(at + 10),
        crc: zip.readUInt32LE(at + 16),
        compressedSize: zip.readUInt32LE(at + 20),
        size: zip.readUInt32LE(at + 24),
        localHeader: zip.readUInt32LE(at + 42),
      });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return {
    names: [...entries.keys()],
    read(name) {
      const entry = entries.get(name);
      if (entry === undefined) throw new ZipError(`the archive has no ${name}`);
      within(zip, entry.localHeader, 30, `the header of ${name}`);
      if (zip.readUInt32LE(entry.localHeader) !== LOCAL_HEADER)
        throw new ZipError(`the header of ${name} has a bad signature`);
      const start =
        entry.localHeader +
        30 +
        zip.readUInt16LE(entry.localHeader + 26) +
        zip.readUInt16LE(entry.localHeader + 28);
      within(zip, start, entry.compressedSize, name);
      const stored = zip.subarray(start, start + entry.compressedSize);
      let data: Buffer;
      if (entry.method === 0) data = stored;
      else if (entry.method === 8) {
        try {
          data = inflateRawSync(stored, { maxOutputLength: Math.max(entry.size, 1) });
        } catch (error) {
          throw new ZipError(`${name} does not inflate (${(error as Error).message})`);
        }
      } else throw new ZipError(`${name} uses compression method ${entry.method}`);
      if (data.length !== entry.size || crc32(data) !== entry.crc)
        throw new ZipError(`${name} fails its size or CRC-32 check`);
      return data;
    },
  };
}
